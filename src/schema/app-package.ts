import { createHash } from 'node:crypto';
import { gunzipSync, unzipSync } from 'fflate';
import { parseTar } from 'nanotar';
import { childrenNamed, parseXml, XmlSyntaxError, type XmlElement } from './xml.js';
import { parseSchema, SchemaError, type Schema } from './sd-schema.js';
import { isTarHeader } from '../archive/tar-header.js';

/** What the config server understood of an uploaded application package. */
export interface ApplicationPackage {
  /** Package files by path relative to the package root (no leading `/`), directories omitted. */
  files: Map<string, Uint8Array>;
  containers: ContainerCluster[];
  contents: ContentCluster[];
  /** Schemas by schema name. */
  schemas: Map<string, Schema>;
  /** `<allow until="YYYY-MM-DD">id</allow>` entries of validation-overrides.xml. */
  validationOverrides: { id: string; until: string }[];
  /** Content hash, used as `applicationPackageFileReference`. */
  fileReference: string;
}

export interface ContainerCluster {
  id: string;
  documentApi: boolean;
  /** `<document-api><ignore-undefined-fields>true</...>`: undefined fields are skipped rather than refused. */
  ignoreUndefinedFields: boolean;
}

export interface ContentCluster {
  id: string;
  /** `global`: `global="true"` (any case, as Boolean.parseBoolean reads it): the type's documents live in the global bucket space. */
  documents: { type: string; mode: string; global: boolean }[];
}

/** The package is unusable; the message says why. Answered as 400 INVALID_APPLICATION_PACKAGE. */
export class InvalidPackageError extends Error {
  override name = 'InvalidPackageError';
}

export type PackageFormat = 'zip' | 'gzip';

/** Reads and validates an uploaded package body. */
export function readApplicationPackage(body: Uint8Array, format: PackageFormat): ApplicationPackage {
  return readPackageFiles(stripSingleTopDirectory(extract(body, format)));
}

/** Reads and validates a package given as its files, by path relative to the package root. */
export function readPackageFiles(files: Map<string, Uint8Array>): ApplicationPackage {
  const servicesBytes = files.get('services.xml');
  if (!servicesBytes) {
    throw new InvalidPackageError(
      `Invalid application package: services.xml not found at the package root (found: ${listSome([...files.keys()])})`,
    );
  }
  const services = parseXmlFile(servicesBytes, 'services.xml');
  if (services.name !== 'services')
    throw new InvalidPackageError(
      `Invalid application package: services.xml: root element must be <services>, not <${services.name}>`,
    );
  for (const [path, bytes] of files) {
    if (path.endsWith('.xml') && path !== 'services.xml') parseXmlFile(bytes, path);
  }

  const schemas = new Map<string, Schema>();
  for (const [path, bytes] of files) {
    if (!/^(schemas|searchdefinitions)\/[^/]+\.sd$/.test(path)) continue;
    let schema: Schema;
    try {
      schema = parseSchema(new TextDecoder().decode(bytes), path);
    } catch (err) {
      if (err instanceof SchemaError) throw new InvalidPackageError(`Invalid application package: ${err.message}`);
      throw err;
    }
    const fileName = path.slice(path.lastIndexOf('/') + 1, -'.sd'.length);
    if (schema.name !== fileName)
      throw new InvalidPackageError(
        `Invalid application package: ${path}: schema '${schema.name}' must be in a file named '${schema.name}.sd'`,
      );
    if (schema.documentName !== schema.name) {
      throw new InvalidPackageError(
        `Invalid application package: ${path}: schema '${schema.name}' declares document '${schema.documentName}'; they must have the same name`,
      );
    }
    if (schemas.has(schema.name))
      throw new InvalidPackageError(`Invalid application package: schema '${schema.name}' is defined twice`);
    schemas.set(schema.name, schema);
  }

  const containers = [...childrenNamed(services, 'container'), ...childrenNamed(services, 'jdisc')].map((c, i) => ({
    id: c.attributes.id ?? (i === 0 ? 'default' : `container${i}`),
    documentApi: childrenNamed(c, 'document-api').length > 0,
    // The config model compares the text with "true" exactly.
    ignoreUndefinedFields: childrenNamed(c, 'document-api').some((d) =>
      childrenNamed(d, 'ignore-undefined-fields').some((e) => e.text.trim() === 'true'),
    ),
  }));
  const contents = childrenNamed(services, 'content').map((c, i): ContentCluster => {
    const id = c.attributes.id ?? (i === 0 ? 'content' : `content${i}`);
    const documents = childrenNamed(c, 'documents').flatMap((d) => childrenNamed(d, 'document'));
    return {
      id,
      documents: documents.map((d) => {
        const type = d.attributes.type;
        if (!type)
          throw new InvalidPackageError(
            `Invalid application package: services.xml line ${d.line}: <document> in content cluster '${id}' has no 'type' attribute`,
          );
        if (!schemas.has(type)) {
          throw new InvalidPackageError(
            `Invalid application package: services.xml line ${d.line}: content cluster '${id}' refers to document type '${type}', which no schema defines (schemas: ${listSome([...schemas.keys()])})`,
          );
        }
        return { type, mode: d.attributes.mode ?? 'index', global: d.attributes.global?.toLowerCase() === 'true' };
      }),
    };
  });
  const seen = new Set<string>();
  for (const id of [...containers.map((c) => c.id), ...contents.map((c) => c.id)]) {
    if (seen.has(id))
      throw new InvalidPackageError(`Invalid application package: services.xml: cluster id '${id}' is used twice`);
    seen.add(id);
  }

  const overridesBytes = files.get('validation-overrides.xml');
  const validationOverrides = overridesBytes
    ? childrenNamed(parseXmlFile(overridesBytes, 'validation-overrides.xml'), 'allow').map((a) => ({
        id: a.text.trim(),
        until: a.attributes.until ?? '',
      }))
    : [];

  const hash = createHash('sha1');
  for (const path of [...files.keys()].sort()) hash.update(path).update(files.get(path)!);
  return { files, containers, contents, schemas, validationOverrides, fileReference: hash.digest('hex').slice(0, 16) };
}

function extract(body: Uint8Array, format: PackageFormat): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const add = (rawPath: string, data: Uint8Array | undefined): void => {
    const path = rawPath.replace(/\\/g, '/').replace(/^\.\//, '');
    if (path.endsWith('/') || data === undefined) return;
    if (path.startsWith('/') || path.split('/').some((s) => s === '..')) {
      throw new InvalidPackageError(`Invalid application package: entry '${rawPath}' points outside the package`);
    }
    if (path.startsWith('__MACOSX/')) return;
    files.set(path, data);
  };
  if (format === 'zip') {
    let entries: Record<string, Uint8Array>;
    try {
      entries = unzipSync(body);
    } catch (err) {
      throw new InvalidPackageError(`Invalid application package: not a valid zip archive (${(err as Error).message})`);
    }
    for (const [path, data] of Object.entries(entries)) add(path, data);
  } else {
    let tar: Uint8Array;
    try {
      tar = gunzipSync(body);
    } catch (err) {
      throw new InvalidPackageError(`Invalid application package: not a valid gzip stream (${(err as Error).message})`);
    }
    // nanotar reads whatever it is given; an archive without a single well-formed header is not a tar.
    if (!isTarHeader(tar))
      throw new InvalidPackageError('Invalid application package: gzip content is not a tar archive');
    for (const item of parseTar(tar))
      if (item.type === 'file' || item.type === undefined) add(item.name, item.data ?? new Uint8Array());
  }
  if (files.size === 0) throw new InvalidPackageError('Invalid application package: the archive holds no files');
  return files;
}

/** Packages zipped from their parent directory hold `app/services.xml`; such a single top directory is the root. */
function stripSingleTopDirectory(files: Map<string, Uint8Array>): Map<string, Uint8Array> {
  if (files.has('services.xml')) return files;
  const tops = new Set([...files.keys()].map((p) => (p.includes('/') ? p.slice(0, p.indexOf('/') + 1) : p)));
  if (tops.size !== 1) return files;
  const [top] = tops;
  if (!top.endsWith('/') || !files.has(`${top}services.xml`)) return files;
  return new Map([...files].map(([p, d]) => [p.slice(top.length), d]));
}

function parseXmlFile(bytes: Uint8Array, path: string): XmlElement {
  try {
    return parseXml(new TextDecoder().decode(bytes));
  } catch (err) {
    if (err instanceof XmlSyntaxError)
      throw new InvalidPackageError(`Invalid application package: ${path} is not well-formed XML: ${err.message}`);
    throw err;
  }
}

function listSome(names: string[]): string {
  if (names.length === 0) return 'none';
  return names.slice(0, 8).join(', ') + (names.length > 8 ? `, ... (${names.length} in all)` : '');
}

/** Document types the package serves through its content clusters, in declaration order, without duplicates. */
export function servedDocumentTypes(pkg: ApplicationPackage): string[] {
  return [...new Set(pkg.contents.flatMap((c) => c.documents.map((d) => d.type)))];
}
