// The simulator's document interface alone, in its own process, with its default settings.
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { announce } from '../lib/child.js';

const server = await startDocumentServer({ port: 0 });
announce(server.url, () => server.close());
