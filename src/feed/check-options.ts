import { OptionError, checkDuration, checkExclusive, checkFunction, checkInteger, checkOneOf, checkProtocol, checkString, checkUrl } from '../core/options-check.js';
import type { FeedOptions } from './options.js';
import { checkRetryBound, checkRetryPolicy } from '../http/retry-delay.js';
import { checkInputFormat } from '../tabular/input-format.js';
import { checkRowOptions } from '../tabular/row-operation.js';

/** Refuses bad FeedOptions with an OptionError naming the option; `new Feeder()` and `feed()` call it. */
export function checkFeedOptions(options: FeedOptions): void {
  checkUrl(options, 'endpoint', true);
  checkInteger(options, 'connections', 1);
  checkInteger(options, 'pipelining', 1);
  checkInteger(options, 'maxStreams', 1);
  checkProtocol(options);
  if (options.http2 === true && options.protocol !== undefined && options.protocol !== 'h2') throw new OptionError('http2', `absent with protocol '${options.protocol}'`, 'true');
  checkInteger(options, 'inflight', 1);
  checkInteger(options, 'maxInflight', 1);
  checkExclusive(options, 'inflight', 'maxInflight');
  checkDuration(options, 'deadlineMs', true);
  checkDuration(options, 'requestTimeoutMs', true);
  checkString(options, 'route');
  checkInteger(options, 'tracelevel', 0, 9);
  checkOneOf(options, 'compression', ['auto', 'gzip', 'none']);
  checkInteger(options, 'maxRetries', 0);
  checkRetryPolicy(options.retryPolicy);
  checkRetryBound(options);
  checkInteger(options, 'maxRequestBytes', 1);
  checkDuration(options, 'maxFailureSeconds');
  checkDuration(options, 'halfOpenSeconds');
  checkDuration(options, 'stopGraceMs');
  checkDuration(options, 'checkpointIntervalMs');
  for (const name of ['failures', 'checkpoint'] as const) if (options[name] !== false) checkString(options, name);
  const shard = options.shard;
  if (shard !== undefined && !(Number.isInteger(shard.count) && shard.count >= 1 && Number.isInteger(shard.index) && shard.index >= 0 && shard.index < shard.count)) {
    throw new OptionError('shard', '{index, count} with 0 <= index < count', `${shard.index}/${shard.count}`);
  }
  // The own transport's settings would be silently ignored with a caller's transport.
  checkExclusive(options, 'transport', 'tls');
  checkExclusive(options, 'transport', 'http2');
  checkFunction(options, 'onResult');
  checkInteger(options, 'workers', 1, 64);
  // A caller's transport lives on the calling thread: worker threads cannot share it.
  if (options.transport !== undefined && options.workers !== undefined && options.workers > 1) throw new OptionError('workers', '1 with a transport', String(options.workers));
  const transform = options.transform;
  if (transform !== undefined && typeof transform !== 'string' && typeof transform !== 'function' && !(transform instanceof URL)) {
    throw new OptionError('transform', 'a module path, a file: URL or a function', String(transform));
  }
  // A function lives on the calling thread: worker threads import a module instead.
  if (typeof transform === 'function' && options.workers !== undefined && options.workers > 1) throw new OptionError('transform', 'a module path with workers', 'a function', 'workers');
  for (const name of ['shuffle', 'resumeToOtherTarget'] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'boolean') throw new OptionError(name, 'true or false', String(value));
  }
  checkInteger(options, 'shuffleBuffer', 1, 10_000_000);
  checkInputFormat(options.inputFormat);
  if (options.rows !== undefined) checkRowOptions(options.rows);
  const rate = options.arrivalRate;
  if (rate !== undefined && !(typeof rate === 'number' && Number.isFinite(rate) && rate > 0)) throw new OptionError('arrivalRate', 'a number > 0 (operations per second)', String(rate));
}
