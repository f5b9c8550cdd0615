/**
 * A hostile MCP server for the tests: it answers every line on stdin with output that is not
 * JSON-RPC (half a JSON object, a JSON array of nonsense, plain text), and never exits on its
 * own. forkflow must give up on it within its start limit, saying what it sent.
 */
import { createInterface } from 'node:readline';

process.stderr.write('malformed server up\n');
createInterface({ input: process.stdin }).on('line', () => {
  process.stdout.write('{"jsonrpc": "2.0", "id": \n');
  process.stdout.write('[1, 2, "not json-rpc"]\n');
  process.stdout.write('hello, I am not an MCP server\n');
});
setInterval(() => undefined, 1 << 30);
