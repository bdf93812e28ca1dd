import type { Argv } from 'yargs';
import { type Protocol, type TlsOptions, VespaBulkError, describeEndpoint, waitForEndpoint } from '../index.js';

/** `-w/--wait S` of the commands that talk to the document API, as the official `vespa` CLI names it. */
export interface WaitArgs {
  wait: number;
}

export function withWaitOption<T>(y: Argv<T>): Argv<T & WaitArgs> {
  return y.option('wait', {
    alias: 'w',
    type: 'number',
    default: 0,
    describe: 'Seconds to wait for the endpoint to answer before starting (GET /ApplicationStatus every 2 s); 0: start at once',
  });
}

/** What a user can do about an endpoint where nothing answers; printed under the VB_UNREACHABLE message. */
export const unreachableHint = 'Check the endpoint (--target), or give --wait <seconds> to wait for it to come up.';

/** The hint for `command`: compare takes its endpoints as arguments, not --target, and has no --wait. */
export function unreachableHintOf(command: string | undefined): string {
  return command === 'compare' ? 'Check the endpoint given as <a> or <b> (compare <a> <b>: an http(s) URL is a cluster, anything else an export).' : unreachableHint;
}

/** With `--wait S` (S > 0): waits for the endpoint, saying so on stderr; rejects with VB_UNREACHABLE when S passed. */
export async function waitIfAsked(
  args: WaitArgs,
  endpoint: string,
  connection: { headers?: Record<string, string>; tls?: TlsOptions; protocol?: Protocol },
  signal?: AbortSignal,
): Promise<void> {
  const seconds = args.wait;
  if (seconds === undefined || seconds === 0) return;
  if (!(Number.isFinite(seconds) && seconds > 0)) throw new VespaBulkError('VB_USAGE', '--wait must be a number of seconds >= 0');
  process.stderr.write(`vespa-bulk: waiting up to ${seconds} s for ${describeEndpoint(endpoint)} to answer\n`);
  const answer = await waitForEndpoint({
    endpoint,
    waitMs: seconds * 1000,
    ...(connection.headers !== undefined && { headers: connection.headers }),
    ...(connection.tls !== undefined && { tls: connection.tls }),
    ...(connection.protocol !== undefined && { protocol: connection.protocol }),
    ...(signal !== undefined && { signal }),
  });
  if (answer.waitedMs >= 1000) process.stderr.write(`vespa-bulk: ${describeEndpoint(endpoint)} answered after ${Math.round(answer.waitedMs / 1000)} s\n`);
}
