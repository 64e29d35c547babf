# The wire protocol's room (wsproto/README.md): what a program that uses it adds to its
# own Makefile.  Included by quickjs-websocket/Makefile and clients/loadgen/Makefile; each
# compiles these sources with its own flags into its own objects.
#
#   WSPROTO_DIR      this folder (absolute)
#   WSPROTO_SRCS     the room's sources, base names (compile them from $(WSPROTO_DIR))
#   WSPROTO_CPPFLAGS where its headers are found: #include "wsproto.h", "utf8_core.h", ...
#   WSPROTO_OBJS     its objects, in a folder of their own under the includer's $(OBJDIR)
#   WSPROTO_LDLIBS   the libraries it needs at link time (zlib: deflate_core.c)


WSPROTO_DIR      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
WSPROTO_SRCS     := wsclose.c handshake_core.c url_core.c utf8_core.c deflate_core.c
WSPROTO_CPPFLAGS := -I$(WSPROTO_DIR)
WSPROTO_OBJS      = $(WSPROTO_SRCS:%.c=$(OBJDIR)/wsproto/%.o)
WSPROTO_LDLIBS   := -lz
