import { resumeSkip, type FeedCheckpoint } from './feed-checkpoint.js';
import type { FeedOptions } from './options.js';
import { readSources, type FeedSource, type ReadProgress, type SourceBatch } from './source.js';

/**
 * A feed's input as batches, read with the feed's options (its stdin, format and rows; its TLS, proxy and retries
 * for URL inputs) from where `resume` stands: the one way the feed engine and the worker coordinator open it. A
 * checkpoint at the end (position null) leaves nothing to read.
 */
export function openFeedSource(
  source: FeedSource,
  options: FeedOptions,
  resume: FeedCheckpoint | undefined,
  progress: ReadProgress,
): AsyncIterable<SourceBatch> {
  if (resume?.position === null) return nothing();
  return readSources(
    source,
    {
      stdin: options.stdin,
      tls: options.tls,
      proxy: options.proxy,
      proxyTls: options.proxyTls,
      urlRetries: options.maxRetries,
      format: options.inputFormat,
      rows: options.rows,
      from: resume?.position ?? undefined,
      skip: resume !== undefined ? resumeSkip(resume) : undefined,
    },
    progress,
  );
}

async function* nothing(): AsyncGenerator<SourceBatch> {}
