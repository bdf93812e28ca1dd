import { badRequest, type HandlerError } from './responses.js';

/**
 * The Java parsers the service's handler reads numbers and durations from the path and the query with, with
 * their messages. The handler wraps every one of them alike: a value that does not parse is a 400
 * `Failed parsing '<value>': <the parser's message>`. Pure: no I/O.
 */

const longMax = (1n << 63n) - 1n;
const unsignedLongMax = (1n << 64n) - 1n;
const intMin = -(1n << 31n);
const intMax = (1n << 31n) - 1n;

export function failedParsing(value: string, message: string): HandlerError {
  return badRequest(`Failed parsing '${value}': ${message}`);
}

const forInputString = (text: string): string => `For input string: "${text}"`;

/** Integer.parseInt: an optional sign and decimal digits, within 32 bits. */
export function parseJavaInt(text: string): number {
  if (!/^[+-]?\d+$/.test(text) || BigInt(text) < intMin || BigInt(text) > intMax)
    throw failedParsing(text, forInputString(text));
  return Number(text);
}

/**
 * Long.parseUnsignedLong: decimal digits (a leading '+' allowed) up to 2^64-1. Its messages depend on the length,
 * because it reads all but the last digit as a signed long and adds the last one by hand.
 */
export function parseUnsignedLong(text: string): bigint {
  if (text.startsWith('-')) throw failedParsing(text, `Illegal leading minus sign on unsigned string ${text}.`);
  if (text.length <= 18) {
    if (!/^\+?\d+$/.test(text)) throw failedParsing(text, forInputString(text));
    return BigInt(text);
  }
  const head = text.slice(0, -1);
  const headError = signedLongError(head);
  if (headError !== undefined) throw failedParsing(text, headError);
  if (!/\d$/.test(text)) throw failedParsing(text, `Bad digit at end of ${text}`);
  const value = BigInt(text);
  if (value > unsignedLongMax) throw failedParsing(text, `String value ${text} exceeds range of unsigned long.`);
  return value;
}

/**
 * Long.parseLong over all but the last digit (at least 18 characters here, with no '-': that was refused): its
 * message names the index of the first character it cannot read, or of the digit where the value overflows.
 */
function signedLongError(text: string): string | undefined {
  let value = 0n;
  for (let i = text.startsWith('+') ? 1 : 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return `Error at index ${i} in: "${text}"`;
    value = value * 10n + BigInt(c - 48);
    if (value > longMax) return `Error at index ${i} in: "${text}"`;
  }
  return undefined;
}

/** Long.parseLong's own check of an `n=` value in a document id: the unsigned path number must fit a signed long. */
export function signedLongMessage(value: bigint): string | undefined {
  return value > longMax ? forInputString(String(value)) : undefined;
}

const unitMultiplier: Record<string, number> = { ks: 1e6, s: 1000, ms: 1, '\u00b5s': 1e-3 };

/**
 * ParameterParser.asMilliSeconds, which reads `timeout` and `timeChunk`: the leading run of digits and dots is the
 * number (no sign, no exponent), the rest (trimmed) the unit; a unit it does not know counts as seconds, so
 * `1e1s` is one second and `2m` two. The fraction of a millisecond is dropped.
 */
export function parseJavaMilliseconds(value: string): number {
  const time = value.trim();
  const number = /^[.0-9]*/.exec(time)![0];
  if (number === '') throw failedParsing(value, `Error parsing '${time}': Invalid number '${time}'`);
  const dots = number.split('.').length - 1;
  if (dots > 1) throw failedParsing(value, `Error parsing '${time}': multiple points`);
  if (number === '.') throw failedParsing(value, `Error parsing '${time}': ${forInputString('.')}`);
  const multiplier = unitMultiplier[time.slice(number.length).trim()] ?? 1000;
  return Math.trunc(Number(number) * multiplier);
}
