import { VespaBulkError } from '../core/errors.js';
import { listContent, readContent } from './application.js';
import { readPackage } from './package.js';
import type { DeployTarget } from './target.js';
import {
  InvalidPackageError,
  readApplicationPackage,
  readPackageFiles,
  type ApplicationPackage,
} from '../schema/app-package.js';
import { documentModelOf, type DocumentModel } from '../schema/document-model.js';

/** The document model of a package on disk (a directory, a .zip or a gzipped tar); an unreadable one is a usage error saying why. */
export async function modelFromPackage(path: string): Promise<DocumentModel> {
  const upload = await readPackage(path);
  return modelOf(() => readApplicationPackage(upload.body, upload.source === 'gzip' ? 'gzip' : 'zip'), path);
}

/** The document model of the package the config server holds, read file by file through its content API. */
export async function modelFromConfigServer(target: DeployTarget): Promise<DocumentModel> {
  const urls = await listContent(target, '', { recursive: true });
  const files = new Map<string, Uint8Array>();
  for (const url of urls) {
    const path = decodeURIComponent(url.slice(url.indexOf('/content/') + '/content/'.length));
    // Only what the model needs: services.xml and the schemas.
    if (path !== 'services.xml' && !/^(schemas|searchdefinitions)\/[^/]+\.sd$/.test(path)) continue;
    files.set(path, (await readContent(target, path)).bytes);
  }
  return modelOf(() => readPackageFiles(files), `the application on ${target.configUrl ?? 'the config server'}`);
}

function modelOf(read: () => ApplicationPackage, where: string): DocumentModel {
  try {
    return documentModelOf(read());
  } catch (err) {
    if (err instanceof InvalidPackageError)
      throw new VespaBulkError('VB_USAGE', `${where}: ${err.message}`, { cause: err });
    throw err;
  }
}
