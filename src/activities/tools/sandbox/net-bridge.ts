/**
 * The sandbox side of a call's network: inside its own network namespace (loopback only)
 * a tiny bridge, run by the worker's own Node binary (the sandbox shows the Node install,
 * view.ts), listens on 127.0.0.1:PORT and carries each connection to the worker's proxy
 * socket (net-proxy.ts), bound read-only at SANDBOX_PROXY_DIR. The command gets the proxy
 * in HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lower-case forms. Nothing else leaves the
 * sandbox: no raw TCP or UDP, no DNS (the proxy resolves names on the worker).
 *
 * The bridge starts before the command, which runs once the bridge said it listens; the
 * command is the namespace's PID 1, so the bridge dies with it.
 */
/** Where the proxy's directory is bound inside the sandbox. */
export const SANDBOX_PROXY_DIR = '/run/forkflow-net';

/** The bridge's port on the sandbox's own loopback (nothing else listens there). */
export const SANDBOX_PROXY_PORT = 3128;

/** The bridge, for `node -e` with the socket path and the port as arguments. */
export const BRIDGE_JS = [
  "const net = require('net');",
  'const [sock, port] = process.argv.slice(1);',
  'net.createServer((c) => {',
  '  const u = net.connect(sock);',
  "  c.on('error', () => u.destroy()); u.on('error', () => c.destroy());",
  '  c.pipe(u).pipe(c);',
  "}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\\n'));",
].join('\n');

/**
 * Shell lines that start the bridge (node in `$2`, its script in `$3`, socket in `$4`) and
 * wait until it listens, or until it failed (then the command runs and finds no proxy).
 * `setsid` puts it outside the call's process group: it is not the command's leftover.
 */
export const START_BRIDGE = `exec 3< <(exec setsid "$2" -e "$3" "$4" ${SANDBOX_PROXY_PORT} 2>/dev/null); read -r _ <&3; exec 3<&-`;

/** Arguments after the command for START_BRIDGE. */
export function bridgeArgs(nodePath: string, socket: string): string[] {
  return [nodePath, BRIDGE_JS, `${SANDBOX_PROXY_DIR}/${socket}`];
}

/** The environment that points the command's HTTP clients at the bridge. */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
  const env: Record<string, string> = { NO_PROXY: '', no_proxy: '' };
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  return env;
}
