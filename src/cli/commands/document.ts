import type { AnyCommand } from '../command.js';
import { readFileSync } from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { isVespaBulkError, VespaBulkError } from '../../errors.js';
import { parseDocumentId } from '../../document/id.js';
import { topLevelValue } from '../../feed/json-scan.js';
import { parseOperation } from '../../feed/operation.js';
import { DocumentClient, type DocumentParams, type DocumentResponse } from '../../http/document-client.js';
import { parseHeaderFlags } from '../../http/headers.js';
import { authFailureHint, connectOptions, isAuthFailure, needsTlsMaterial, securityHeaders } from '../../http/tls.js';
import { repeatable } from '../repeatable.js';
import { withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { connectionFromArgs, describeTargetOrigin, withTargetOptions, type TargetArgs } from '../target-options.js';
import { indentJson } from '../json-indent.js';
import { defaultRetryPolicy, parseRetryAfter } from '../../http/retry-delay.js';
import { retryLoop } from '../../http/retry-loop.js';
import { waitIfAsked, withWaitOption, type WaitArgs } from '../wait-option.js';
import { exitCodesEpilog } from '../exit-codes.js';
import { protocolFromArgs, tellProtocolOnce, withProtocolOption, type ProtocolArgs } from '../transport-options.js';
import { tensorFormats, type TensorFormat } from '../../document/tensor-format.js';

/** The help of `--tensor-format`, the same on get and visit. */
export const tensorFormatHelp = 'How tensor fields are written (format.tensors; the service default is short). hex, hex-value: dense cells as one hex string, far less JSON for embeddings, and fed back unchanged';

/**
 * get, put, update, remove of one document, in the forms of the official `vespa document`: `put [id] file`
 * (the id may come from the file's "put" key), `update [id] file`, `remove id|file`, `get id...`. The
 * response JSON is printed; 404 and 412 are clear failures.
 */

interface DocumentArgs extends SecurityArgs, TargetArgs, WaitArgs, ProtocolArgs {
  /** put/update/remove: the id, or (without a second positional) the file. */
  first?: string;
  /** put/update: the file after an id. */
  file?: string;
  /** get: the ids. */
  ids?: string[];
  'ignore-missing'?: boolean;
  cluster?: string;
  'field-set'?: string;
  'tensor-format'?: TensorFormat;
  condition?: string;
  create?: boolean;
  route?: string;
  timeout?: string;
  tracelevel?: number;
  'dry-run'?: boolean;
  header?: string[];
  assign?: string[];
}

type Kind = 'get' | 'put' | 'update' | 'remove';

function options<T>(y: Argv<T>, kind: Kind) {
  let b = withProtocolOption(withWaitOption(withTargetOptions(withSecurityOptions(y))))
    .option('cluster', { type: 'string', describe: 'Content cluster' })
    .option('timeout', { type: 'string', describe: 'Server-side timeout, e.g. 5s' })
    .option('tracelevel', { type: 'number', describe: 'Trace level 1-9 (the trace is in the printed response)' })
    .option('header', repeatable("Extra request header 'Name: value' (repeatable)"));
  if (kind === 'get') {
    b = b
      .positional('ids', { type: 'string', array: true, demandOption: true, describe: 'Document ids, id:<namespace>:<type>::<local>' })
      .option('field-set', { type: 'string', describe: 'Fields to return: [all], [document], [id], <type>:f1,f2' })
      .option('tensor-format', { type: 'string', choices: tensorFormats, describe: tensorFormatHelp })
      .option('ignore-missing', { type: 'boolean', default: false, describe: 'A document that does not exist (404) is not an error' });
  } else {
    b = b
      .positional('first', {
        type: 'string',
        describe: kind === 'remove' ? 'Document id, or a file (- for stdin) holding {"remove":id}' : `Document id, or (alone) the file, whose "${kind}" key gives the id`,
      })
      .option('condition', { type: 'string', describe: 'Test-and-set condition (a document selection); a false one gives 412. Default: "condition" in the JSON given' })
      .option('route', { type: 'string', describe: 'Route of the operation' })
      .option('dry-run', { type: 'boolean', describe: 'Validate only: the service answers but changes nothing' });
  }
  if (kind === 'put' || kind === 'update') {
    b = b
      .positional('file', { type: 'string', describe: 'JSON text, a file, or - for stdin: {"fields":{...}} as in a feed file (or the fields object alone)' })
      .option('create', {
        type: 'boolean',
        describe:
          (kind === 'update' ? 'Create the document (empty) when missing, then update it' : 'With --condition: write a missing document without checking the condition') +
          '. Default: "create" in the JSON given',
      });
  }
  if (kind === 'update') b = b.option('assign', repeatable('Shorthand: field=<JSON value> (repeatable)'));
  return b.epilog(exitCodesEpilog);
}

/** The fields of a put/update: `{"fields":{...}}` (as in a feed file, the id key ignored) or the object alone. */
export function fieldsFromText(text: string): Record<string, unknown> {
  const o = documentObjectOf(text);
  return isFeedShaped(o) ? (o.fields as Record<string, unknown>) : o;
}

/** The JSON object a document command was given, or a clear error. */
function documentObjectOf(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new VespaBulkError('VB_BAD_JSON', `the document is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new VespaBulkError('VB_USAGE', 'the document must be a JSON object');
  return value as Record<string, unknown>;
}

/** `{"fields":{...}}`, possibly with the other keys of a feed operation, rather than the fields alone. */
function isFeedShaped(o: Record<string, unknown>): boolean {
  return typeof o.fields === 'object' && o.fields !== null && !Array.isArray(o.fields) && Object.keys(o).every((k) => ['fields', 'put', 'update', 'id', 'condition', 'create'].includes(k));
}

/** What a document given as a feed operation says besides its fields. */
export interface OperationMeta {
  kind?: Kind;
  id?: string;
  condition?: string;
  create?: boolean;
}

const operationShapeKeys = new Set(['put', 'id', 'update', 'remove', 'fields', 'condition', 'create']);

/**
 * The operation, id, `condition` and `create` of a document written as a feed operation (`{"put":id,
 * "fields":...,"condition":...}`, `{"fields":...,"create":true}`, `{"remove":id}`); nothing for the fields
 * object alone. Checked as the feed checks an operation, so a file that feeds also works here.
 */
export function operationMetaOf(text: string): OperationMeta {
  const o = documentObjectOf(text);
  const keys = Object.keys(o);
  const hasOperationKey = keys.some((k) => k === 'put' || k === 'id' || k === 'update' || k === 'remove');
  const shaped = keys.every((k) => operationShapeKeys.has(k)) && (isFeedShaped(o) || 'remove' in o);
  if (!shaped) return {};
  if (hasOperationKey) {
    try {
      const op = parseOperation(Buffer.from(text.trim()));
      return { kind: op.kind, id: op.id, ...(op.condition !== undefined && { condition: op.condition }), ...(op.create !== undefined && { create: op.create }) };
    } catch (err) {
      // A mistake in what the user handed over on the command line: bad usage, not a failed operation.
      if (isVespaBulkError(err) && err.code !== 'VB_USAGE') throw new VespaBulkError('VB_USAGE', `the document: ${err.message}`, { cause: err });
      throw err;
    }
  }
  if (o.condition !== undefined && typeof o.condition !== 'string') throw new VespaBulkError('VB_USAGE', 'the document: "condition" must be a string');
  if (o.create !== undefined && typeof o.create !== 'boolean') throw new VespaBulkError('VB_USAGE', 'the document: "create" must be true or false');
  return { ...(typeof o.condition === 'string' && { condition: o.condition }), ...(typeof o.create === 'boolean' && { create: o.create }) };
}

/** A document id rather than a file or JSON text: ids always start with `id:`. */
function isDocumentId(arg: string): boolean {
  return arg.startsWith('id:');
}

/** JSON text as is, '-' (which yargs hands over as '') for stdin, else a file name. */
export function readSource(source: string | undefined): string | undefined {
  if (source === undefined) return undefined;
  if (source.trimStart().startsWith('{')) return source;
  const stdin = source === '-' || source === '';
  try {
    return readFileSync(stdin ? 0 : source, 'utf8');
  } catch (err) {
    throw new VespaBulkError('VB_USAGE', `cannot read ${stdin ? 'stdin' : `'${source}'`}: ${(err as Error).message}`);
  }
}

/**
 * The fields of a put or update as JSON text, from the source text and `--assign` flags, without a round
 * trip through JavaScript values: a `long` beyond 2^53 would be sent with other digits than were given.
 * The source is checked as JSON; a field both in it and assigned is refused rather than silently picked.
 */
export function fieldsTextOf(text: string | undefined, assign: string[] | undefined): { text: string; fields: Record<string, unknown> } {
  let sourceText = '{}';
  let fields: Record<string, unknown> = {};
  if (text !== undefined) {
    fields = fieldsFromText(text);
    const buf = Buffer.from(text);
    const span = isFeedShaped(JSON.parse(text) as Record<string, unknown>) ? topLevelValue(buf, 0, buf.length, 'fields') : undefined;
    sourceText = span === undefined ? text.trim() : buf.toString('utf8', span.start, span.end);
  }
  const members: string[] = [];
  for (const a of assign ?? []) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new VespaBulkError('VB_USAGE', `--assign '${a}': expected field=<JSON value>, e.g. year=2001 or title='"x"'`);
    const name = a.slice(0, eq);
    const raw = a.slice(eq + 1);
    if (Object.hasOwn(fields, name)) throw new VespaBulkError('VB_USAGE', `--assign ${name}: the field is also in the document given; say it once`);
    let value: unknown;
    let valueText: string;
    try {
      value = JSON.parse(raw);
      valueText = raw.trim();
    } catch {
      value = raw;
      valueText = JSON.stringify(raw);
    }
    fields[name] = { assign: value };
    members.push(`${JSON.stringify(name)}:{"assign":${valueText}}`);
  }
  if (members.length === 0) return { text: sourceText, fields };
  const inner = sourceText.slice(1, sourceText.lastIndexOf('}')).trim();
  return { text: `{${inner === '' ? '' : `${inner},`}${members.join(',')}}`, fields };
}

const maxAttempts = 5;

/** An answer the service asks to have sent again (429, 503): nothing was applied. */
class RetryableAnswer extends Error {
  constructor(readonly response: DocumentResponse) {
    super(`HTTP ${response.status}`);
  }
}

/** 429 and 503 are sent again (nothing was applied); others are final. */
async function withRetries(send: () => Promise<DocumentResponse>): Promise<DocumentResponse> {
  const outcome = await retryLoop(
    async () => {
      const res = await send();
      if (res.status === 429 || res.status === 503) throw new RetryableAnswer(res);
      return res;
    },
    {
      policy: { ...defaultRetryPolicy, maxRetries: maxAttempts - 1 },
      safeToRepeat: false,
      // Transport errors are not retried: an operation that may have been applied is reported as it is.
      failureOf: (err) => (err instanceof RetryableAnswer ? { status: err.response.status, retryAfterMs: parseRetryAfter(err.response.headers['retry-after']) } : undefined),
    },
  );
  if (outcome.kind === 'succeeded') return outcome.value;
  // Failed: the last 429 or 503 is the answer to report.
  if (outcome.kind === 'failed') return (outcome.error as RetryableAnswer).response;
  throw new VespaBulkError('VB_ABORTED', 'stopped');
}

/** A malformed id is a mistake on the command line, not a failure of the service. */
function checkId(id: string): void {
  try {
    parseDocumentId(id);
  } catch (err) {
    if (isVespaBulkError(err, 'VB_BAD_DOCUMENT_ID')) throw new VespaBulkError('VB_USAGE', err.message, { cause: err });
    throw err;
  }
}

/** What one put/update/remove sends: the id, the fields (as text) and what the JSON given says of condition and create. */
export interface DocumentOperation {
  id: string;
  fields?: string;
  meta: OperationMeta;
}

/**
 * The operation of `put [id] file`, `update [id] file` and `remove id|file`, as the official `vespa document`
 * reads them: an id given before the file wins over the one in the file; without one, the file must name the
 * same operation as the command and its id.
 */
export function documentOperationOf(kind: Exclude<Kind, 'get'>, first: string | undefined, file: string | undefined, assign: string[] | undefined): DocumentOperation {
  let id: string | undefined;
  let source: string | undefined;
  if (file !== undefined) {
    id = first;
    source = file;
  } else if (first !== undefined && isDocumentId(first)) id = first;
  else source = first;
  const text = readSource(source);
  const meta = text === undefined ? {} : operationMetaOf(text);
  if (id === undefined) {
    if (meta.id === undefined) {
      throw new VespaBulkError('VB_USAGE', `no document id: give it before the file (${kind} <id> <file>), or as the "${kind}" key in the JSON`);
    }
    if (meta.kind !== kind) throw new VespaBulkError('VB_USAGE', `the command is ${kind}, but the JSON given is a ${meta.kind}`);
    id = meta.id;
  }
  checkId(id);
  if (kind === 'remove') return { id, meta };
  const given = fieldsTextOf(text, assign);
  if (kind === 'update' && Object.keys(given.fields).length === 0) {
    throw new VespaBulkError('VB_USAGE', 'update needs operations: JSON {"fields":{"f":{"assign":v}}}, a file, - for stdin, or --assign f=v');
  }
  if (kind === 'put' && text === undefined) throw new VespaBulkError('VB_USAGE', 'put needs the document: JSON {"fields":{...}}, a file, or - for stdin');
  return { id, fields: given.text, meta };
}

function command(kind: Kind, describe: string): CommandModule<object, DocumentArgs> {
  return {
    command: kind === 'get' ? 'get <ids..>' : kind === 'remove' ? 'remove <first>' : `${kind} <first> [file]`,
    describe,
    builder: (y) => options(y, kind),
    handler: async (args) => {
      const ids = kind === 'get' ? (args.ids ?? []) : [];
      for (const id of ids) checkId(id);
      const operation = kind === 'get' ? undefined : documentOperationOf(kind, args.first, args.file, args.assign);
      // As the service does with its query parameters, a flag wins over the same key in the JSON.
      const condition = args.condition ?? operation?.meta.condition;
      const create = args.create ?? operation?.meta.create;
      const params: DocumentParams = {
        ...(args.cluster !== undefined && { cluster: args.cluster }),
        ...(args['field-set'] !== undefined && { fieldSet: args['field-set'] }),
        ...(args['tensor-format'] !== undefined && { tensorFormat: args['tensor-format'] }),
        ...(condition !== undefined && { condition }),
        ...(create !== undefined && { create }),
        ...(args.route !== undefined && { route: args.route }),
        ...(args.timeout !== undefined && { timeout: args.timeout }),
        ...(args.tracelevel !== undefined && { tracelevel: args.tracelevel }),
        ...(args['dry-run'] && { dryRun: true }),
      };
      const connection = connectionFromArgs(args, parseHeaderFlags(args.header));
      const note = describeTargetOrigin(connection);
      if (note !== undefined) process.stderr.write(`vespa-bulk: ${note}\n`);
      const security = connection.security;
      const { protocol } = protocolFromArgs(args);
      const access = { headers: securityHeaders(security), ...(needsTlsMaterial(security) && { tls: connectOptions(security) }), ...(protocol !== undefined && { protocol }) };
      await waitIfAsked(args, connection.url, access);
      const client = new DocumentClient({
        endpoint: connection.url,
        ...access,
        onProtocol: tellProtocolOnce(connection.url, protocol, (line) => process.stderr.write(`${line}\n`)),
      });
      try {
        if (operation === undefined) {
          // As the official CLI: the documents in order, stopping at the first failure.
          for (const id of ids) {
            const res = await withRetries(() => client.get(id, params));
            if (res.status === 404 && args['ignore-missing']) {
              process.stderr.write(`vespa-bulk: ${id}: not found (ignored: --ignore-missing)\n`);
              continue;
            }
            if (!report(id, res)) return;
          }
          return;
        }
        const { id, fields } = operation;
        const res = await withRetries(() => {
          switch (kind) {
            case 'put':
              return client.put(id, fields!, params);
            case 'update':
              return client.update(id, fields!, params);
            default:
              return client.remove(id, params);
          }
        });
        report(id, res);
      } finally {
        await client.close();
      }
    },
  };
}

/** Prints a success on stdout, or says why on stderr and sets exit code 1; true on success. */
function report(id: string, res: DocumentResponse): boolean {
  if (res.status >= 200 && res.status < 300) {
    process.stdout.write(`${printable(res)}\n`);
    return true;
  }
  process.exitCode = 1;
  const message = typeof res.body?.message === 'string' ? res.body.message : undefined;
  if (res.status === 404) process.stderr.write(`vespa-bulk: ${id}: not found (404)\n`);
  else if (res.status === 412) {
    process.stderr.write(`vespa-bulk: ${id}: the condition did not hold, or the document does not exist (412)${message ? `: ${message}` : ''}\n`);
  } else if (isAuthFailure(res.status)) {
    process.stderr.write(`vespa-bulk: ${id}: HTTP ${res.status}${message ? `: ${message}` : ''} (${authFailureHint(res.status)})\n`);
  } else process.stderr.write(`vespa-bulk: ${id}: HTTP ${res.status}${message ? `: ${message}` : ''}\n`);
  return false;
}

export const commands: AnyCommand[] = [
  command('get', 'Print documents, one after another (stops at the first failure)'),
  command('put', 'Write one document (create or replace): put [id] <file>'),
  command('update', 'Update fields of one document: update [id] [file]'),
  command('remove', 'Remove one document: remove <id|file>'),
];

/** The answer as the service wrote it, indented: printed from the parsed value, a large `long` would be rounded. */
function printable(res: DocumentResponse): string {
  const text = res.raw.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    return JSON.stringify(res.body, null, 2);
  }
  return indentJson(text);
}
