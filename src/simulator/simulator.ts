import {
  startDocumentServer,
  type DocumentServer,
  type DocumentServerOptions,
} from './document-api/document-server.js';
import { startConfigServer, type ConfigServer, type ConfigServerOptions } from './config-server/config-server.js';

/**
 * Options of the whole simulator: the document interface's, plus the config server's port and options.
 * `tls` and `token` apply to both halves unless `config` sets its own.
 */
export interface SimulatorOptions extends DocumentServerOptions {
  /** Config server port; 0 = ephemeral; false = no config server. Default 19071. */
  configPort?: number | false;
  /** Options of the config half other than its host and port. */
  config?: Omit<ConfigServerOptions, 'host' | 'port' | 'onActivate' | 'onDelete'>;
}

/** Both simulators, as `vespa-bulk serve` runs them. */
export interface Simulator {
  /** The document interface, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The config server, when started. */
  configUrl: string | undefined;
  documents: DocumentServer;
  config: ConfigServer | undefined;
  /** Stops both servers. */
  close(): Promise<void>;
}

/**
 * The whole simulator: the document interface (default port 8080) and the config server (default 19071),
 * linked so that activating an application package makes the document interface serve the package's content
 * clusters and document types, and deleting the application goes back to the `clusters` option.
 * @example
 * ```ts
 * import { feed } from 'vespa-bulk';
 * import { startSimulator } from 'vespa-bulk/simulator';
 *
 * const sim = await startSimulator({ port: 0, configPort: false, faults: { errorRate: 0.05 } });
 * try {
 *   const summary = await feed([{ put: 'id:mynamespace:music::song-1', fields: { title: 'Song 1' } }], { endpoint: sim.url });
 *   console.log(summary.ok, summary.retries); // 1, and the retries the faults caused
 * } finally {
 *   await sim.close();
 * }
 * ```
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const { configPort = 19071, config: configOptions, ...documentOptions } = options;
  const documents = await startDocumentServer(documentOptions);
  let config: ConfigServer | undefined;
  if (configPort !== false) {
    try {
      config = await startConfigServer({
        ...configOptions,
        tls: configOptions?.tls ?? documentOptions.tls,
        token: configOptions?.token ?? documentOptions.token,
        host: documentOptions.host,
        port: configPort,
        onActivate: ({ documentTypes, model, contentClusters }) => {
          documents.setDocumentTypes(documentTypes);
          documents.setDocumentModel(model);
          documents.setContentClusters(contentClusters);
        },
        onDelete: () => {
          documents.setDocumentTypes(null);
          documents.setDocumentModel(null);
          documents.setContentClusters(null);
        },
      });
    } catch (err) {
      await documents.close();
      throw err;
    }
  }
  return {
    url: documents.url,
    configUrl: config?.url,
    documents,
    config,
    async close() {
      await Promise.all([documents.close(), config?.close()]);
    },
  };
}
