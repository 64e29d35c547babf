// Shared by the JavaScript echo servers: --idle-defaults (servers/README.md, item 18).
// Without it a server turns its runtime's idle timeout and server pings off (nothing but
// echoes on the wire, as every benchmark needs); with it, the runtime's own defaults
// apply, as an application that sets nothing would run (how a vanished peer is noticed:
// docs/misbehave.md, "Peers that vanish").
export function parseIdleDefaults(argv) {
  return argv.includes('--idle-defaults');
}
