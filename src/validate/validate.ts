import type { Readable } from 'node:stream';
import { VespaBulkError } from '../core/errors.js';
import type { DeployTarget } from '../deploy/target.js';
import { FailureWriter } from '../feed/failures.js';
import { parseOperation, type FeedOperation } from '../document/operation.js';
import { readSources, type FeedSource } from '../feed/source.js';
import type { DocumentModel } from '../schema/document-model.js';
import { judgeDocumentOperation } from '../schema/judge.js';
import { isCertainlyAccepted } from '../schema/quick-accept.js';
import { modelFromConfigServer, modelFromPackage } from '../deploy/load-model.js';

/** Where the schema comes from, and where refused operations go. Exactly one of `app` or `configUrl`. */
export interface ValidateOptions {
  /** An application package: a directory, a .zip, or a gzipped tar. */
  app?: string;
  /** A config server URL: the package of its active application, read through the content API. */
  configUrl?: string;
  /** The rest of the config server target (tenant, application, credentials) when `configUrl` is given. */
  configTarget?: Omit<DeployTarget, 'configUrl'>;
  /** Failure output, as feed writes it: refused operations as feedable input, and `<file>.reasons.jsonl`. */
  failures?: string;
  /** What `-` reads. Default process.stdin. */
  stdin?: Readable;
  /** Called for each refused operation (in input order). */
  onRefused?: (refusal: Refusal) => void;
}

/** One refused operation, with the answer the service would give. */
export interface Refusal {
  input: string;
  line: number;
  id?: string;
  operation?: string;
  /** The status the service would answer (400 or 500); absent when the operation could not even be read. */
  status?: number;
  message: string;
  /** VespaBulkError code when the operation could not be read (VB_BAD_JSON, VB_BAD_OPERATION, ...). */
  code?: string;
}

/** The summary `vespa-bulk validate` prints, in the feed summary's style. */
export interface ValidateSummary {
  'validator.operation.count': number;
  'validator.ok.count': number;
  'validator.error.count': number;
  /** Operations that could not be read at all (bad JSON, unknown key, bad id): also in error.count. */
  'validator.parse.error.count': number;
  /** Refused operations by the status the service would answer. */
  'validator.response.code.counts': Record<string, number>;
  /** Refused operations per reason: the message with the document id replaced by `<id>` (at most 100 reasons, the rest under `(other)`). */
  'validator.error.reason.counts': Record<string, number>;
  'validator.seconds': number;
}

/** What `validate` found. */
export interface ValidateOutcome {
  summary: ValidateSummary;
  /** The failure file, when something was written to it. */
  failuresFile?: string;
}

const maxReasons = 100;

/**
 * Judges every operation of a corpus against an application package's schemas without a cluster, as the
 * /document/v1 handler would: the id's document type, each field's type and value, each update operation.
 * Reads input exactly as `feed` does (JSONL, JSON arrays, several files, `-`, `.gz`). A package that cannot
 * be read is a VB_USAGE error.
 * @example
 * ```ts
 * import { validate } from 'vespa-bulk';
 *
 * const { summary } = await validate(['corpus.jsonl'], { app: 'app/', onRefused: (r) => console.error(`${r.input}:${r.line}`, r.message) });
 * const refused = summary['validator.error.count'];
 * console.log(refused === 0 ? 'the cluster would take every operation' : `${refused} refused`);
 * ```
 */
export async function validate(source: FeedSource, options: ValidateOptions): Promise<ValidateOutcome> {
  const given = [options.app, options.configUrl].filter((o) => o !== undefined).length;
  if (given !== 1)
    throw new VespaBulkError(
      'VB_USAGE',
      'validate needs the schema: give exactly one of an application package (--app) or a config server (--config-url)',
    );
  const model =
    options.app !== undefined
      ? await modelFromPackage(options.app)
      : await modelFromConfigServer({ ...options.configTarget, configUrl: options.configUrl });
  const started = performance.now();
  const failures = options.failures === undefined ? undefined : new FailureWriter(options.failures);
  const summary: ValidateSummary = {
    'validator.operation.count': 0,
    'validator.ok.count': 0,
    'validator.error.count': 0,
    'validator.parse.error.count': 0,
    'validator.response.code.counts': {},
    'validator.error.reason.counts': {},
    'validator.seconds': 0,
  };
  const reasons = summary['validator.error.reason.counts'];
  let reasonCount = 0;
  const refuse = (bytes: Buffer, refusal: Refusal, verbatim: boolean): void => {
    summary['validator.error.count']++;
    if (refusal.status !== undefined)
      summary['validator.response.code.counts'][refusal.status] =
        (summary['validator.response.code.counts'][refusal.status] ?? 0) + 1;
    else summary['validator.parse.error.count']++;
    let reason = refusal.message.replace(/^In document '[^']*'/, "In document '<id>'");
    if (reasons[reason] === undefined && reasonCount >= maxReasons) reason = '(other)';
    if (reasons[reason] === undefined) reasonCount++;
    reasons[reason] = (reasons[reason] ?? 0) + 1;
    failures?.write(
      bytes,
      {
        input: refusal.input,
        inputLine: refusal.line,
        id: refusal.id,
        operation: refusal.operation,
        status: refusal.status,
        message: refusal.message,
        attempts: 0,
        code: refusal.code,
      },
      verbatim,
    );
    options.onRefused?.(refusal);
  };

  try {
    for await (const batch of readSources(source, { stdin: options.stdin })) {
      for (const item of batch.items) {
        summary['validator.operation.count']++;
        if (item.error !== undefined) {
          refuse(
            item.bytes,
            { input: batch.name, line: item.line, message: item.error.message, code: item.error.code },
            true,
          );
          continue;
        }
        // Nearly every operation is accepted: decided from the bytes; the rest take the full path, which words the refusal.
        if (isCertainlyAccepted(model, item.bytes)) {
          summary['validator.ok.count']++;
          continue;
        }
        let op: FeedOperation;
        try {
          op = parseOperation(item.bytes);
        } catch (err) {
          const e =
            err instanceof VespaBulkError
              ? err
              : new VespaBulkError('VB_BAD_OPERATION', String((err as Error)?.message ?? err));
          refuse(item.bytes, { input: batch.name, line: item.line, message: e.message, code: e.code }, true);
          continue;
        }
        const message = judge(model, op);
        if (message === undefined) summary['validator.ok.count']++;
        else
          refuse(
            item.bytes,
            {
              input: batch.name,
              line: item.line,
              id: op.id,
              operation: op.kind,
              status: message.status,
              message: message.message,
            },
            false,
          );
      }
      if (failures !== undefined) await failures.drained();
    }
  } finally {
    await failures?.close();
  }
  summary['validator.seconds'] = Math.round(performance.now() - started) / 1000;
  return failures !== undefined && failures.count > 0 ? { summary, failuresFile: failures.path } : { summary };
}

/** The service's refusal of one operation, or undefined when it would be accepted. Removes are not checked by the handler. */
function judge(model: DocumentModel, op: FeedOperation): { status: number; message: string } | undefined {
  if (op.kind === 'remove' || op.fields === undefined) return undefined;
  // The feed client sends the fields as `{"fields":<raw>}`; condition and create go in the query.
  const body = `{"fields":${op.fields.toString('utf8')}}`;
  // parseOperation has checked the id: its type is the third ':'-separated part.
  const c1 = op.id.indexOf(':', 3);
  const type = op.id.slice(c1 + 1, op.id.indexOf(':', c1 + 1));
  const verdict = judgeDocumentOperation(model, op.kind, op.id, type, body);
  return verdict.ok ? undefined : { status: verdict.status, message: verdict.message };
}
