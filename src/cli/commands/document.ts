import { readFileSync } from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { isVespaBulkError, VespaBulkError } from '../../errors.js';
import { parseDocumentId } from '../../document/id.js';
import { topLevelValue } from '../../feed/json-scan.js';
import { DocumentClient, type DocumentParams, type DocumentResponse } from '../../http/document-client.js';
import { parseHeaderFlags } from '../../http/headers.js';
import { authFailureHint, connectOptions, isAuthFailure, needsTlsMaterial, securityHeaders } from '../../http/tls.js';
import { repeatable } from '../repeatable.js';
import { securityFromArgs, withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { indentJson } from '../json-indent.js';
import { parseRetryAfter, retryDelay } from '../../http/retry-delay.js';
import { waitIfAsked, withWaitOption, type WaitArgs } from '../wait-option.js';
import { exitCodesEpilog } from '../exit-codes.js';

/** get, put, update, remove of one document: print the response JSON; 404 and 412 are clear failures. */

interface DocumentArgs extends SecurityArgs, WaitArgs {
  id: string;
  source?: string;
  target: string;
  cluster?: string;
  'field-set'?: string;
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
  let b = withWaitOption(withSecurityOptions(y))
    .positional('id', { type: 'string', demandOption: true, describe: 'Document id, id:<namespace>:<type>::<local>' })
    .option('target', { alias: 't', type: 'string', default: 'http://127.0.0.1:8080', describe: 'Container endpoint' })
    .option('cluster', { type: 'string', describe: 'Content cluster' })
    .option('timeout', { type: 'string', describe: 'Server-side timeout, e.g. 5s' })
    .option('tracelevel', { type: 'number', describe: 'Trace level 1-9 (the trace is in the printed response)' })
    .option('header', repeatable("Extra request header 'Name: value' (repeatable)"));
  if (kind === 'get') b = b.option('field-set', { type: 'string', describe: 'Fields to return: [all], [document], [id], <type>:f1,f2' });
  else {
    b = b
      .option('condition', { type: 'string', describe: 'Test-and-set condition (a document selection); a false one gives 412' })
      .option('route', { type: 'string', describe: 'Route of the operation' })
      .option('dry-run', { type: 'boolean', describe: 'Validate only: the service answers but changes nothing' });
  }
  if (kind === 'put' || kind === 'update') {
    b = b
      .positional('source', { type: 'string', describe: 'JSON text, a file, or - for stdin: {"fields":{...}} (or the fields object alone)' })
      .option('create', {
        type: 'boolean',
        describe: kind === 'update' ? 'Create the document (empty) when missing, then update it' : 'With --condition: write a missing document without checking the condition',
      });
  }
  if (kind === 'update') b = b.option('assign', repeatable('Shorthand: field=<JSON value> (repeatable)'));
  return b.epilog(exitCodesEpilog);
}

/** The fields of a put/update: `{"fields":{...}}` (as in a feed file, the id key ignored) or the object alone. */
export function fieldsFromText(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new VespaBulkError('VB_BAD_JSON', `the document is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new VespaBulkError('VB_USAGE', 'the document must be a JSON object');
  const o = value as Record<string, unknown>;
  return isFeedShaped(o) ? (o.fields as Record<string, unknown>) : o;
}

/** `{"fields":{...}}`, possibly with the other keys of a feed operation, rather than the fields alone. */
function isFeedShaped(o: Record<string, unknown>): boolean {
  return typeof o.fields === 'object' && o.fields !== null && !Array.isArray(o.fields) && Object.keys(o).every((k) => ['fields', 'put', 'update', 'id', 'condition', 'create'].includes(k));
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

/** 429 and 503 are sent again (nothing was applied); others are final. */
async function withRetries(send: () => Promise<DocumentResponse>): Promise<DocumentResponse> {
  for (let attempt = 1; ; attempt++) {
    const res = await send();
    if (res.status !== 429 && res.status !== 503) return res;
    const delay = attempt >= maxAttempts ? 0 : retryDelay({ attempt, status: res.status, safeToRepeat: false, retryAfterMs: parseRetryAfter(res.headers['retry-after']) });
    if (delay === 0) return res;
    await new Promise((r) => setTimeout(r, delay));
  }
}

function command(kind: Kind, describe: string): CommandModule<object, DocumentArgs> {
  return {
    command: kind === 'put' || kind === 'update' ? `${kind} <id> [source]` : `${kind} <id>`,
    describe,
    builder: (y) => options(y, kind) as unknown as Argv<DocumentArgs>,
    handler: async (args) => {
      try {
        parseDocumentId(args.id);
      } catch (err) {
        // A malformed id is a mistake on the command line, not a failure of the service.
        if (isVespaBulkError(err, 'VB_BAD_DOCUMENT_ID')) throw new VespaBulkError('VB_USAGE', err.message, { cause: err });
        throw err;
      }
      const params: DocumentParams = {
        ...(args.cluster !== undefined && { cluster: args.cluster }),
        ...(args['field-set'] !== undefined && { fieldSet: args['field-set'] }),
        ...(args.condition !== undefined && { condition: args.condition }),
        ...(args.create !== undefined && { create: args.create }),
        ...(args.route !== undefined && { route: args.route }),
        ...(args.timeout !== undefined && { timeout: args.timeout }),
        ...(args.tracelevel !== undefined && { tracelevel: args.tracelevel }),
        ...(args['dry-run'] && { dryRun: true }),
      };
      let fields: string | undefined;
      if (kind === 'put' || kind === 'update') {
        const text = readSource(args.source);
        const given = fieldsTextOf(text, args.assign);
        fields = given.text;
        if (kind === 'update' && Object.keys(given.fields).length === 0) {
          throw new VespaBulkError('VB_USAGE', 'update needs operations: JSON {"fields":{"f":{"assign":v}}}, a file, - for stdin, or --assign f=v');
        }
        if (kind === 'put' && text === undefined) throw new VespaBulkError('VB_USAGE', 'put needs the document: JSON {"fields":{...}}, a file, or - for stdin');
      }
      const security = securityFromArgs(args, parseHeaderFlags(args.header));
      await waitIfAsked(args, args.target, { headers: securityHeaders(security), ...(needsTlsMaterial(security) && { tls: connectOptions(security) }) });
      const client = new DocumentClient({
        endpoint: args.target,
        headers: securityHeaders(security),
        ...(needsTlsMaterial(security) && { tls: connectOptions(security) }),
      });
      let res: DocumentResponse;
      try {
        res = await withRetries(() => {
          switch (kind) {
            case 'get':
              return client.get(args.id, params);
            case 'put':
              return client.put(args.id, fields!, params);
            case 'update':
              return client.update(args.id, fields!, params);
            case 'remove':
              return client.remove(args.id, params);
          }
        });
      } finally {
        await client.close();
      }
      if (res.status >= 200 && res.status < 300) {
        process.stdout.write(`${printable(res)}\n`);
        return;
      }
      process.exitCode = 1;
      const message = typeof res.body?.message === 'string' ? res.body.message : undefined;
      if (res.status === 404) process.stderr.write(`vespa-bulk: ${args.id}: not found (404)\n`);
      else if (res.status === 412) {
        process.stderr.write(`vespa-bulk: ${args.id}: the condition did not hold, or the document does not exist (412)${message ? `: ${message}` : ''}\n`);
      } else if (isAuthFailure(res.status)) {
        process.stderr.write(`vespa-bulk: ${args.id}: HTTP ${res.status}${message ? `: ${message}` : ''} (${authFailureHint(res.status)})\n`);
      } else process.stderr.write(`vespa-bulk: ${args.id}: HTTP ${res.status}${message ? `: ${message}` : ''}\n`);
    },
  };
}

export const commands: CommandModule<any, any>[] = [
  command('get', 'Print one document'),
  command('put', 'Write one document (create or replace)'),
  command('update', 'Update fields of one document'),
  command('remove', 'Remove one document'),
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
