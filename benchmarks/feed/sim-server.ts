/** The simulator's document server as a child process for benchmarks: argument = fault settings JSON; prints its URL. */
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';

const faults = JSON.parse(process.argv[2] ?? '{}');
const server = await startDocumentServer({ port: 0, faults });
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void server.close().then(() => process.exit(0));
});
