// Shared by the Node adapters: what a TLS connection negotiated, for the result line's
// "tls" field (clients/README.md), from Node's TLSSocket.

// Node names groups as OpenSSL's curve names; the result uses the IANA names.
const IANA_GROUP = { X25519: 'x25519', X448: 'x448', prime256v1: 'secp256r1', secp384r1: 'secp384r1', secp521r1: 'secp521r1' };

export const LIBRARY = `OpenSSL ${process.versions.openssl}`;

export function describeTlsSocket(socket) {
  if (!socket || typeof socket.getProtocol !== 'function') {
    return { library: LIBRARY, cannot_tell: 'the connection has no TLS socket' };
  }
  const cipher = socket.getCipher();
  const key = socket.getEphemeralKeyInfo();
  const group = key && key.name ? IANA_GROUP[key.name] || key.name : null;
  return { version: socket.getProtocol(), cipher: cipher && cipher.standardName, group, library: LIBRARY };
}
