import { resolve } from 'node:path';
import { splitEndpoint } from '../http/endpoint.js';
import { OptionError } from '../core/options-check.js';
import type { InputFormat } from '../tabular/input-format.js';
import type { RowOptions } from '../tabular/row-operation.js';
import { parseShard, type Shard } from './shard.js';
import type { TransformSpec } from '../transform/transform.js';

/**
 * What a feed checkpoint records of where the feed sends and what its requests carry, and what a resume does with
 * it: a setting the resume leaves out is taken from the checkpoint, one it gives that differs is refused. Which
 * settings, and why those: docs/guarantees.md#what-a-feed-checkpoint-records.
 */

/** `FeedOptions.endpoint` when none is given. */
export const defaultFeedEndpoint = 'http://127.0.0.1:8080';

/** The settings of a checkpoint's feed that change what its requests carry, or where: those set, as given. */
export interface RecordedOptions {
  route?: string;
  dryRun?: true;
  /** A module's path or URL as given; a function cannot be written down, and is recorded as `<function>`. */
  transform?: string;
  inputFormat?: InputFormat;
  /** Without `model` (schemas handed over as an object); `configUrl` as its origin and path. */
  rows?: Omit<RowOptions, 'model'>;
}

/** What a checkpoint says of the feed it continues (absent from version 1 checkpoints, but `shard`). */
export interface RecordedFeed {
  /** 1: the checkpoint records nothing of this but the shard. Default 2. */
  version?: number;
  /**
   * The endpoint as the feed used it: origin and path, no user info, query or fragment (credentials are never
   * written). Absent when nothing was sent there (nothing answered): then any endpoint goes on.
   */
  endpoint?: string;
  options?: RecordedOptions;
  /** `i/N`, when the feed fed one shard of several. */
  shard?: string;
}

/** The options that decide where a feed's requests go and what they carry (`FeedOptions` has them all). */
export interface SendingOptions {
  endpoint?: string;
  route?: string;
  dryRun?: boolean;
  transform?: TransformSpec;
  inputFormat?: InputFormat;
  rows?: RowOptions;
  shard?: Shard;
  resumeToOtherTarget?: boolean;
}

const functionTransform = '<function>';

/** A URL as a checkpoint records it and a resume compares it: origin and path, no trailing slash (what the feed uses of it). */
export function recordedEndpoint(url: string | undefined): string {
  const { origin, prefix } = splitEndpoint(url ?? defaultFeedEndpoint);
  return `${origin}${prefix}`;
}

/** The endpoint and the settings of `options` that a checkpoint records. */
export function recordFeed(options: SendingOptions): { endpoint?: string; options?: RecordedOptions } {
  const recorded: RecordedOptions = {};
  for (const key of ['route', 'dryRun', 'transform', 'inputFormat'] as const) {
    const value = normalised(key, options[key]);
    if (value !== undefined) (recorded as Record<string, unknown>)[key] = value;
  }
  const rows: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options.rows ?? {})) {
    const v = key === 'model' ? undefined : normalised(`rows.${key}`, value);
    if (v !== undefined) rows[key] = v;
  }
  if (Object.keys(rows).length > 0) recorded.rows = rows;
  return {
    endpoint: recordedEndpoint(options.endpoint),
    ...(Object.keys(recorded).length > 0 && { options: recorded }),
  };
}

/**
 * A setting as it is recorded and compared: a default value as none (false, `put`, seconds), a URL by origin and
 * path, a module by its path resolved, a function transform by the one name it can have.
 */
function normalised(key: string, value: unknown): unknown {
  if (value === undefined || value === false) return undefined;
  switch (key) {
    case 'transform':
      if (typeof value === 'function') return functionTransform;
      return value instanceof URL ? value.href : value;
    case 'rows.operation':
      return value === 'put' ? undefined : value;
    case 'rows.timestampUnit':
      return value === 's' ? undefined : value;
    case 'rows.configUrl':
      return typeof value === 'string' ? urlWithoutCredentials(value) : value;
    default:
      return value;
  }
}

/** A URL by origin and path; a value that is no URL as it is (not checked until a table needs it, it must not fail a save). */
function urlWithoutCredentials(value: string): string {
  try {
    return recordedEndpoint(value);
  } catch {
    return value;
  }
}

/** Whether a given setting is the recorded one: paths compare resolved, so `./t.mjs` is `t.mjs`. */
function same(key: string, recorded: unknown, given: unknown): boolean {
  const a = normalised(key, recorded);
  const b = normalised(key, given);
  if ((key === 'transform' || key === 'rows.app') && typeof a === 'string' && typeof b === 'string')
    return asPath(a) === asPath(b);
  return a === b;
}

function asPath(spec: string): string {
  // A URL (file:, data:) names itself; a Windows path's drive letter is not a scheme.
  return /^[a-z][a-z0-9+.-]+:/i.test(spec) ? spec : resolve(spec);
}

/**
 * The options a feed resumed from a checkpoint runs with: each recorded setting that `options` leave out is taken
 * from it (the endpoint, the route, the shard, what the requests carry); one given that differs is refused
 * (`ResumeConflictError`, VB_USAGE), the endpoint and route only unless `resumeToOtherTarget`. A version 1
 * checkpoint records none of this: it can be neither taken from nor checked, but for its shard. `file` names the
 * checkpoint in messages.
 */
export function resumedOptions<T extends SendingOptions>(
  options: T,
  recorded: RecordedFeed,
  file = 'the checkpoint',
): T {
  const out: T = { ...options };
  // A shard given that differs is refused by checkResumable, with the inputs.
  if (out.shard === undefined && recorded.shard !== undefined && recorded.shard !== '0/1')
    out.shard = parseShard(recorded.shard);
  if ((recorded.version ?? 2) < 2) return out;
  if (recorded.endpoint !== undefined) {
    if (options.endpoint === undefined) out.endpoint = recorded.endpoint;
    else if (
      !same('endpoint', recorded.endpoint, recordedEndpoint(options.endpoint)) &&
      options.resumeToOtherTarget !== true
    ) {
      throw new ResumeConflictError(file, 'endpoint', recorded.endpoint, recordedEndpoint(options.endpoint));
    }
  }
  const settings = recorded.options ?? {};
  const take = (key: string, had: unknown, given: unknown, set: (value: unknown) => void, target: boolean): void => {
    if (given === undefined) {
      if (had !== undefined) set(had);
    } else if (!same(key, had, given) && !(target && options.resumeToOtherTarget === true)) {
      throw new ResumeConflictError(file, key, had, given);
    }
  };
  take('route', settings.route, options.route, (v) => (out.route = v as string), true);
  take('dryRun', settings.dryRun, options.dryRun, (v) => (out.dryRun = v as boolean), false);
  take('transform', settings.transform, options.transform, (v) => (out.transform = v as string), false);
  take('inputFormat', settings.inputFormat, options.inputFormat, (v) => (out.inputFormat = v as InputFormat), false);
  const rows: Record<string, unknown> = { ...options.rows };
  const hadRows = (settings.rows ?? {}) as Record<string, unknown>;
  for (const key of new Set([...Object.keys(hadRows), ...Object.keys(rows)])) {
    if (key === 'model') continue;
    take(`rows.${key}`, hadRows[key], rows[key], (v) => (rows[key] = v), false);
  }
  if (Object.keys(rows).length > 0) out.rows = rows;
  if (out.transform === functionTransform) {
    throw new ResumeConflictError(file, 'transform', functionTransform, undefined);
  }
  return out;
}

/**
 * A resume that gives a setting other than the one its checkpoint recorded (or leaves out a transform function,
 * which a checkpoint cannot give back). An OptionError, so the CLI names its flags.
 */
export class ResumeConflictError extends OptionError {
  constructor(
    readonly file: string,
    option: string,
    readonly recorded: unknown,
    readonly given: unknown,
  ) {
    super(option, 'the recorded value', given);
    this.message = this.messageWith((o) => o);
  }

  override messageWith(nameOf: (option: string) => string): string {
    // A row option is a flag of its own: `rows.idField` is --id-field.
    const name = (o: string): string => {
      const leaf = o.replace(/^rows\./, '');
      return leaf !== o && nameOf(leaf) !== leaf ? nameOf(leaf) : nameOf(o);
    };
    const option = name(this.option);
    const override = name('resumeToOtherTarget');
    if (this.option === 'endpoint') {
      return `${this.file} was written by a feed to ${shown(this.recorded)}, not ${shown(this.given)} (${option}): a resume feeds the rest where the feed began; give ${option} ${shown(this.recorded)}, or ${override} to feed the rest to ${shown(this.given)}`;
    }
    if (this.recorded === functionTransform && this.given === undefined) {
      return `${this.file} was written with a transform function (${option}), which a checkpoint cannot keep: give it again`;
    }
    const with_ = (value: unknown): string => {
      if (value === undefined || value === false) return `without ${option}`;
      return value === true ? `with ${option}` : `with ${option} ${shown(value)}`;
    };
    const what =
      this.option === 'route'
        ? `give the same, or ${override} to feed the rest with ${option} ${shown(this.given)}`
        : 'give the same, or leave it out to take it from the checkpoint';
    return `${this.file} was written ${with_(this.recorded)}, not ${with_(this.given)}: a resume sends the rest of the feed as it began; ${what}`;
  }
}

/** A setting's value in a message: a function is not printed (its source would be). */
function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (value instanceof URL) return value.href;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
