// The simulator's document interface over TLS, in its own process: cert and key from SIM_TLS_CERT / SIM_TLS_KEY.
import { readFileSync } from 'node:fs';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { announce } from '../lib/child.js';

const server = await startDocumentServer({
  port: 0,
  tls: { cert: readFileSync(process.env.SIM_TLS_CERT!), key: readFileSync(process.env.SIM_TLS_KEY!) },
});
announce(server.url, () => server.close());
