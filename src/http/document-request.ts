/**
 * How one document operation becomes an HTTP request: method, query and body. Pure; shared by the feeder and
 * the document client so both send exactly the same thing.
 */
export interface DocumentParams {
  cluster?: string;
  fieldSet?: string;
  /** Test-and-set condition (a document selection). */
  condition?: string;
  create?: boolean;
  route?: string;
  /** Server-side timeout with unit, e.g. `5s` or `1000ms`. */
  timeout?: string;
  tracelevel?: number;
  dryRun?: boolean;
}

export type OperationKind = 'put' | 'update' | 'remove' | 'get';

export const methodOf = { put: 'POST', update: 'PUT', remove: 'DELETE', get: 'GET' } as const;

/** `?a=b&...` (or '') from the parameters that are set, each value URL-encoded. */
export function documentQuery(params: DocumentParams | undefined): string {
  if (!params) return '';
  let q = '';
  const add = (k: string, v: string): void => {
    q += `${q === '' ? '?' : '&'}${k}=${encodeURIComponent(v)}`;
  };
  if (params.cluster !== undefined) add('cluster', params.cluster);
  if (params.fieldSet !== undefined) add('fieldSet', params.fieldSet);
  if (params.condition !== undefined) add('condition', params.condition);
  if (params.create !== undefined) add('create', String(params.create));
  if (params.route !== undefined) add('route', params.route);
  if (params.timeout !== undefined) add('timeout', params.timeout);
  if (params.tracelevel !== undefined && params.tracelevel > 0) add('tracelevel', String(params.tracelevel));
  if (params.dryRun) add('dryRun', 'true');
  return q;
}

const fieldsOpen = Buffer.from('{"fields":');
const fieldsClose = Buffer.from('}');

/** `{"fields":<raw>}` around the raw bytes of a fields object, which are never re-serialised. */
export function wrapFields(raw: Buffer | string | object): Buffer {
  if (Buffer.isBuffer(raw)) return Buffer.concat([fieldsOpen, raw, fieldsClose], fieldsOpen.length + raw.length + 1);
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  return Buffer.from(`{"fields":${text}}`);
}

/** Milliseconds as the service's timeout parameter. */
export function formatTimeout(ms: number): string {
  return `${Math.max(1, Math.round(ms))}ms`;
}

/**
 * Whether an update's fields object (JSON text) holds nothing but `assign` operations, so that applying it
 * twice leaves the same document. increment, add, remove and the rest would apply twice.
 */
export function isAssignOnly(fieldsJson: string): boolean {
  try {
    const fields = JSON.parse(fieldsJson) as Record<string, unknown>;
    if (fields === null || typeof fields !== 'object') return false;
    for (const v of Object.values(fields)) {
      if (v === null || typeof v !== 'object') return false;
      const keys = Object.keys(v);
      if (keys.length !== 1 || keys[0] !== 'assign') return false;
    }
    return true;
  } catch {
    return false;
  }
}
