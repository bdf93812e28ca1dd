import { startDocumentServer, type DocumentServer, type DocumentServerOptions } from './document-api/document-server.js';
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
 * linked so that activating an application package restricts the document types the document interface
 * accepts, and deleting the application lifts the restriction again.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const { configPort = 19071, config: configOptions, ...documentOptions } = options;
  const documents = await startDocumentServer(documentOptions);
  let config: ConfigServer | undefined;
  if (configPort !== false) {
    try {
      config = await startConfigServer({
        ...configOptions,
        contentClusters: configOptions?.contentClusters ?? documentOptions.clusters,
        tls: configOptions?.tls ?? documentOptions.tls,
        token: configOptions?.token ?? documentOptions.token,
        host: documentOptions.host,
        port: configPort,
        onActivate: ({ documentTypes, model }) => {
          documents.setDocumentTypes(documentTypes);
          documents.setDocumentModel(model);
        },
        onDelete: () => {
          documents.setDocumentTypes(null);
          documents.setDocumentModel(null);
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
