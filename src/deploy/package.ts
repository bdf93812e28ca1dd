import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { gunzipSync, unzipSync, zipSync, type Zippable } from 'fflate';
import { parseTar } from 'nanotar';
import { VespaBulkError } from '../core/errors.js';
import { isTarHeader } from '../archive/tar-header.js';

/** An application package ready to upload. */
export interface PackageUpload {
  body: Uint8Array;
  contentType: 'application/zip' | 'application/x-gzip';
  /** Where it came from: a directory that was zipped, or an archive sent as it is. */
  source: 'directory' | 'zip' | 'gzip';
  /** Files in the package, by path inside it. */
  files: string[];
}

/**
 * Reads a package from a directory (zipped in memory) or from a .zip (or gzipped tar) file. Problems the
 * server would only report after an upload (no services.xml, not an archive) are usage errors here.
 */
export async function readPackage(path: string): Promise<PackageUpload> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new VespaBulkError('VB_USAGE', `application package '${path}' does not exist`);
  }
  if (info.isDirectory()) return zipDirectory(path);
  const bytes = new Uint8Array(await readFile(path));
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) {
    let names: string[];
    try {
      names = Object.keys(unzipSync(bytes, { filter: () => true }));
    } catch (err) {
      throw new VespaBulkError('VB_USAGE', `'${path}' is not a readable zip file: ${(err as Error).message}`);
    }
    if (!hasServicesXml(names))
      throw new VespaBulkError(
        'VB_USAGE',
        `'${path}' has no services.xml at its root: it is not an application package`,
      );
    return { body: bytes, contentType: 'application/zip', source: 'zip', files: names.filter((n) => !n.endsWith('/')) };
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b)
    return { body: bytes, contentType: 'application/x-gzip', source: 'gzip', files: tarFiles(path, bytes) };
  throw new VespaBulkError(
    'VB_USAGE',
    `'${path}' is neither a directory nor a zip file (nor a gzipped tar): give an application package directory or its .zip`,
  );
}

/** The files of a gzipped tar package, which must hold services.xml at its root (or in its one top directory). */
function tarFiles(path: string, bytes: Uint8Array): string[] {
  let tar: Uint8Array;
  try {
    tar = gunzipSync(bytes);
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `'${path}' is not a readable gzip file: ${(err as Error).message}`);
  }
  // nanotar reads anything as a tar; a first header whose checksum does not add up means it is not one.
  if (!isTarHeader(tar))
    throw new VespaBulkError(
      'VB_USAGE',
      `'${path}' is gzipped but holds no tar archive: it is not an application package`,
    );
  let names: string[];
  try {
    names = parseTar(tar)
      .filter((item) => item.type === 'file' || item.type === undefined)
      .map((item) => item.name.replace(/^\.\//, ''));
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `'${path}' is not a readable tar archive: ${(err as Error).message}`);
  }
  if (!hasServicesXml(names))
    throw new VespaBulkError('VB_USAGE', `'${path}' has no services.xml at its root: it is not an application package`);
  return names.filter((n) => !n.endsWith('/')).sort();
}

const hasServicesXml = (names: string[]): boolean =>
  names.includes('services.xml') || names.some((n) => /^[^/]+\/services\.xml$/.test(n));

/** Hidden files and directories (.git, .vespa-bulk, editor files) never belong in a package. */
const skipped = (name: string): boolean => name.startsWith('.');

async function zipDirectory(dir: string): Promise<PackageUpload> {
  const paths: string[] = [];
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      if (skipped(entry.name)) continue;
      const full = join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) paths.push(full);
    }
  };
  await walk(dir);
  const files = paths.map((p) => relative(dir, p).split(sep).join('/')).sort();
  if (!files.includes('services.xml')) {
    throw new VespaBulkError('VB_USAGE', `'${dir}' has no services.xml: it is not an application package directory`);
  }
  const zippable: Zippable = {};
  for (let i = 0; i < paths.length; i++)
    zippable[relative(dir, paths[i]).split(sep).join('/')] = new Uint8Array(await readFile(paths[i]));
  return { body: zipSync(zippable, { level: 6 }), contentType: 'application/zip', source: 'directory', files };
}
