import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import { readFileSync } from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { VespaBulkError } from '../../core/errors.js';
import {
  checkGivenId,
  conditionAndCreate,
  singleOperationOf,
  splitPositionals,
  type SingleOperation,
} from '../../document/single-operation.js';
import { DocumentClient, type DocumentResponse } from '../../http/document-client.js';
import type { DocumentParams } from '../../http/document-request.js';
import { authFailureHint, isAuthFailure, securityHeaders, transportSecurity } from '../../http/tls.js';
import { tensorFormats, type TensorFormat } from '../../document/tensor-format.js';
import { answerMessage, statusMessage } from '../../document/answer-message.js';
import { repeatable } from '../repeatable.js';
import { withSecurityOptions, type SecurityArgs } from '../security-options.js';
import { connectionFromArgs, describeTargetOrigin, withTargetOptions, type TargetArgs } from '../target-options.js';
import { indentJson } from '../json-indent.js';
import { waitIfAsked, withWaitOption, type WaitArgs } from '../wait-option.js';
import { exitCodesEpilog } from '../exit-codes.js';
import {
  endpointVia,
  protocolFromArgs,
  tellProtocolOnce,
  withProtocolOption,
  type ProtocolArgs,
} from '../transport-options.js';
import { parseHeaderFlags } from '../header-flags.js';

/** The help of `--tensor-format`, the same on get and visit. */
export const tensorFormatHelp =
  'How tensor fields are written (format.tensors; the service default is short). hex, hex-value: dense cells as one hex string, far less JSON for embeddings, and fed back unchanged';

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
  verbose: boolean;
}

type Kind = 'get' | 'put' | 'update' | 'remove';

function options<T>(y: Argv<T>, kind: Kind) {
  let b = withProtocolOption(withWaitOption(withTargetOptions(withSecurityOptions(y))))
    .option('cluster', { type: 'string', describe: 'Content cluster' })
    .option('timeout', { type: 'string', describe: 'Server-side timeout, e.g. 5s' })
    .option('tracelevel', { type: 'number', describe: 'Trace level 1-9 (the trace is in the printed response)' })
    .option('header', repeatable("Extra request header 'Name: value' (repeatable)"))
    .option('verbose', {
      alias: 'v',
      type: 'boolean',
      default: false,
      describe:
        "Say which HTTP is spoken, and print a failed answer that is not the service's JSON (a proxy's page) whole",
    });
  if (kind === 'get') {
    b = b
      .positional('ids', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: 'Document ids, id:<namespace>:<type>::<local>',
      })
      .option('field-set', { type: 'string', describe: 'Fields to return: [all], [document], [id], <type>:f1,f2' })
      .option('tensor-format', { type: 'string', choices: tensorFormats, describe: tensorFormatHelp })
      .option('ignore-missing', {
        type: 'boolean',
        default: false,
        describe: 'A document that does not exist (404) is not an error',
      });
  } else {
    b = b
      .positional('first', {
        type: 'string',
        describe:
          kind === 'remove'
            ? 'Document id, or a file (- for stdin) holding {"remove":id}'
            : `Document id, or (alone) the file, whose "${kind}" key gives the id`,
      })
      .option('condition', {
        type: 'string',
        describe:
          'Test-and-set condition (a document selection); a false one gives 412. Default: "condition" in the JSON given',
      })
      .option('route', { type: 'string', describe: 'Route of the operation' })
      .option('dry-run', { type: 'boolean', describe: 'Validate only: the service answers but changes nothing' });
  }
  if (kind === 'put' || kind === 'update') {
    b = b
      .positional('file', {
        type: 'string',
        describe: 'JSON text, a file, or - for stdin: {"fields":{...}} as in a feed file (or the fields object alone)',
      })
      .option('create', {
        type: 'boolean',
        describe:
          (kind === 'update'
            ? 'Create the document (empty) when missing, then update it'
            : 'With --condition: write a missing document without checking the condition') +
          '. Default: "create" in the JSON given',
      });
  }
  if (kind === 'update') b = b.option('assign', repeatable('Shorthand: field=<JSON value> (repeatable)'));
  return b.epilog(exitCodesEpilog);
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
 * The operation of `put [id] file`, `update [id] file` and `remove id|file`: which positional is the id and
 * which the document, the document read (a file, stdin or JSON text), then read as the library reads it.
 */
export function documentOperationOf(
  kind: Exclude<Kind, 'get'>,
  first: string | undefined,
  file: string | undefined,
  assign: string[] | undefined,
): SingleOperation {
  const { id, source } = splitPositionals(first, file);
  const text = readSource(source);
  return singleOperationOf(kind, {
    ...(id !== undefined && { id }),
    ...(text !== undefined && { text }),
    ...(assign !== undefined && { assign }),
  });
}

function command(kind: Kind): CommandModule<object, DocumentArgs> {
  return {
    ...listedCommand(kind),
    builder: (y) => options(y, kind),
    handler: async (args) => {
      const ids = kind === 'get' ? (args.ids ?? []) : [];
      for (const id of ids) checkGivenId(id);
      const operation = kind === 'get' ? undefined : documentOperationOf(kind, args.first, args.file, args.assign);
      // As the service does with its query parameters, a flag wins over the same key in the JSON.
      const { condition, create } = conditionAndCreate(operation?.meta ?? {}, {
        ...(args.condition !== undefined && { condition: args.condition }),
        ...(args.create !== undefined && { create: args.create }),
      });
      const params: DocumentParams = {
        ...(args.cluster !== undefined && { cluster: args.cluster }),
        ...(args['field-set'] !== undefined && { fieldSet: args['field-set'] }),
        ...(args['tensor-format'] !== undefined && { tensorFormat: args['tensor-format'] }),
        ...(condition !== undefined && { condition }),
        ...(create !== undefined && { create }),
        ...(args.route !== undefined && { route: args.route }),
        ...(args.timeout !== undefined && { serviceTimeout: args.timeout }),
        ...(args.tracelevel !== undefined && { tracelevel: args.tracelevel }),
        ...(args['dry-run'] && { dryRun: true }),
      };
      const connection = connectionFromArgs(args, parseHeaderFlags(args.header));
      const note = describeTargetOrigin(connection);
      if (note !== undefined) process.stderr.write(`vespa-bulk: ${note}\n`);
      const security = connection.security;
      const { protocol } = protocolFromArgs(args);
      const access = {
        headers: securityHeaders(security),
        ...transportSecurity(security),
        ...(protocol !== undefined && { protocol }),
      };
      await waitIfAsked(args, connection.url, access);
      const client = new DocumentClient({
        endpoint: connection.url,
        ...access,
        // One request: which HTTP it went over informs only when asked for.
        ...(args.verbose && {
          onProtocol: tellProtocolOnce(endpointVia(connection.url, security.proxy), protocol, (line) =>
            process.stderr.write(`${line}\n`),
          ),
        }),
      });
      try {
        if (operation === undefined) {
          // As the official CLI: the documents in order, stopping at the first failure.
          for (const id of ids) {
            const res = await client.get(id, params);
            if (res.status === 404 && args['ignore-missing']) {
              process.stderr.write(`vespa-bulk: ${id}: not found (ignored: --ignore-missing)\n`);
              continue;
            }
            if (!report(id, res, args.verbose)) return;
          }
          return;
        }
        // The client sends 429 and 503 again (four times at most), and a transport error where that is safe.
        const res = await write(client, kind, operation, params);
        report(operation.id, res, args.verbose);
      } finally {
        await client.close();
      }
    },
  };
}

/** Sends the one write of a put, update or remove command. */
function write(
  client: DocumentClient,
  kind: Kind,
  { id, fields }: SingleOperation,
  params: DocumentParams,
): Promise<DocumentResponse> {
  if (kind === 'put') return client.put(id, fields!, params);
  if (kind === 'update') return client.update(id, fields!, params);
  return client.remove(id, params);
}

/**
 * Prints a success on stdout, or says why on stderr and sets exit code 1; true on success. A failed answer is one
 * line (a proxy's HTML page: its title); `verbose` adds its whole body when that line is not all of it.
 */
function report(id: string, res: DocumentResponse, verbose: boolean): boolean {
  if (res.status >= 200 && res.status < 300) {
    process.stdout.write(`${printable(res)}\n`);
    return true;
  }
  process.exitCode = 1;
  const message = answerMessage(res.raw);
  const body = res.raw.toString('utf8').trim();
  if (verbose && body !== '' && body !== message) process.stderr.write(`${body}\n`);
  if (res.status === 404) process.stderr.write(`vespa-bulk: ${id}: not found (404)\n`);
  else if (res.status === 412) {
    process.stderr.write(
      `vespa-bulk: ${id}: the condition did not hold, or the document does not exist (412)${message ? `: ${message}` : ''}\n`,
    );
  } else if (isAuthFailure(res.status)) {
    process.stderr.write(`vespa-bulk: ${id}: ${statusMessage(res.status, message)} (${authFailureHint(res.status)})\n`);
  } else process.stderr.write(`vespa-bulk: ${id}: ${statusMessage(res.status, message)}\n`);
  return false;
}

export const commands: AnyCommand[] = [command('get'), command('put'), command('update'), command('remove')];

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
