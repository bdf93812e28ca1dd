import { VespaBulkError } from './errors.js';

/**
 * Checks of library options, shared by every feature so that a bad value fails at once with a `VB_USAGE`
 * error that names the option, rather than hanging or failing somewhere deep (an in-flight limit of 0 would
 * never send anything). Pure. Unknown option names are not checked: callers pass objects that may carry more.
 */

/**
 * A `VB_USAGE` error about one option. `option` is the library's name for it (`inflight`, `timeoutMs`), so the
 * CLI can say which flag was meant without parsing the message.
 * @example
 * ```ts
 * import { feed, OptionError } from 'vespa-bulk';
 *
 * try {
 *   await feed(['corpus.jsonl'], { endpoint: 'http://127.0.0.1:8080', inflight: 0 });
 * } catch (err) {
 *   if (err instanceof OptionError) console.error(err.option, err.message); // inflight, inflight must be an integer >= 1, not 0
 * }
 * ```
 */
export class OptionError extends VespaBulkError {
  /** The option's name in the options object, e.g. `inflight`. */
  readonly option: string;
  /** With an option that excludes `option`: its name. */
  readonly conflictsWith: string | undefined;
  private readonly requirement: string;
  private readonly value: unknown;

  constructor(option: string, requirement: string, value: unknown, conflictsWith?: string) {
    super(
      'VB_USAGE',
      compose(option, requirement, value, conflictsWith, (o) => o),
    );
    this.option = option;
    this.requirement = requirement;
    this.value = value;
    this.conflictsWith = conflictsWith;
  }

  /**
   * The message with each option named by `nameOf` (the CLI passes its flag names). The value is left out when
   * the name changes, since a flag may take it in other units (`--timeout` seconds for `timeoutMs`).
   */
  messageWith(nameOf: (option: string) => string): string {
    return compose(this.option, this.requirement, this.value, this.conflictsWith, nameOf);
  }
}

function compose(
  option: string,
  requirement: string,
  value: unknown,
  conflictsWith: string | undefined,
  nameOf: (option: string) => string,
): string {
  const name = nameOf(option);
  if (conflictsWith !== undefined) return `give ${name} or ${nameOf(conflictsWith)}, not both`;
  return name === option
    ? `${name} must be ${requirement}, not ${describeValue(value)}`
    : `${name} must be ${requirement}`;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

type Options = object;

function valueOf(options: Options, name: string): unknown {
  return (options as Record<string, unknown>)[name];
}

/** An integer in [min, max], when given. */
export function checkInteger(options: Options, name: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  const v = valueOf(options, name);
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new OptionError(
      name,
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`,
      v,
    );
  }
}

/** A finite number >= 0 (or > 0 with `positive`), when given: durations in seconds or milliseconds. */
export function checkDuration(options: Options, name: string, positive = false): void {
  const v = valueOf(options, name);
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0)) {
    throw new OptionError(name, positive ? 'a finite number > 0' : 'a finite number >= 0', v);
  }
}

/** One of `values`, when given. */
export function checkOneOf(options: Options, name: string, values: readonly unknown[]): void {
  const v = valueOf(options, name);
  if (v === undefined || values.includes(v)) return;
  throw new OptionError(
    name,
    `one of ${values.map((x) => (typeof x === 'string' ? `'${x}'` : String(x))).join(', ')}`,
    v,
  );
}

/** A non-empty string, when given. */
export function checkString(options: Options, name: string): void {
  const v = valueOf(options, name);
  if (v === undefined) return;
  if (typeof v !== 'string' || v === '') throw new OptionError(name, 'a non-empty string', v);
}

/** An http or https URL; required unless `optional`. */
export function checkUrl(options: Options, name: string, optional = false): void {
  const v = valueOf(options, name);
  if (v === undefined && optional) return;
  let ok = false;
  if (typeof v === 'string') {
    try {
      const url = new URL(v);
      ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      ok = false;
    }
  }
  if (!ok) throw new OptionError(name, 'an http:// or https:// URL', v);
}

/** A function, when given. */
export function checkFunction(options: Options, name: string): void {
  const v = valueOf(options, name);
  if (v !== undefined && typeof v !== 'function') throw new OptionError(name, 'a function', v);
}

/**
 * `protocol` one of `auto`, `h2`, `http1.1`, and not with a caller's `transport` (whose protocol is its own, so the
 * option would be silently ignored); `onProtocol` a function. Every option set that makes a connection pool has them.
 */
export function checkProtocol(options: Options): void {
  checkOneOf(options, 'protocol', ['auto', 'h2', 'http1.1']);
  checkExclusive(options, 'transport', 'protocol');
  checkFunction(options, 'onProtocol');
}

/** At most one of the two, since one would silently override the other. */
export function checkExclusive(options: Options, a: string, b: string): void {
  const va = valueOf(options, a);
  const vb = valueOf(options, b);
  if (va !== undefined && va !== false && vb !== undefined && vb !== false) {
    throw new OptionError(a, 'left out', va, b);
  }
}
