import { describe, expect, it } from 'vitest';
import {
  checkVisitRetry,
  defaultVisitRetryPolicy,
  resolveVisitRetry,
  type VisitRetryPolicy,
} from '../../src/visit/options.js';
import { validateVisitOptions } from '../../src/visit/query.js';
import { validateBulkOptions } from '../../src/visit/bulk.js';

describe('the visit retry bound', () => {
  it('takes maxRetries, or the default', () => {
    expect(resolveVisitRetry({ maxRetries: 4 }).maxRetries).toBe(4);
    expect(resolveVisitRetry(undefined).maxRetries).toBe(defaultVisitRetryPolicy.maxRetries);
  });

  it('keeps the other fields of the defaults and of the caller', () => {
    expect(resolveVisitRetry({ baseDelayMs: 5 })).toEqual({ ...defaultVisitRetryPolicy, baseDelayMs: 5 });
  });

  it('refuses maxAttempts, a name no release took, instead of ignoring it', () => {
    const old = { maxAttempts: 3 } as Partial<VisitRetryPolicy>;
    expect(() => checkVisitRetry(old)).toThrow(/maxAttempts must be left out \(the bound is maxRetries\)/);
    expect(() => checkVisitRetry({ maxRetries: 3 })).not.toThrow();
    expect(() => validateVisitOptions({ endpoint: 'http://127.0.0.1:1', retry: old })).toThrow(
      expect.objectContaining({ code: 'VB_USAGE' }),
    );
    expect(() =>
      validateBulkOptions({
        endpoint: 'http://127.0.0.1:1',
        kind: 'delete-where',
        selection: 'true',
        retry: { maxRetries: -1 },
      }),
    ).toThrow(/maxRetries must be an integer >= 0/);
  });
});
