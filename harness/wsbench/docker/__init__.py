"""Containers: a private Docker engine, the images, and the containerized benchmark."""
