import { describe, expect, it } from 'vitest';
import { checkVisitRetry, defaultVisitRetryPolicy, resolveVisitRetry } from '../../src/visit/options.js';
import { validateVisitOptions } from '../../src/visit/query.js';
import { validateBulkOptions } from '../../src/visit/bulk.js';

describe('the visit retry bound', () => {
  it('reads maxAttempts, the old name, as maxRetries', () => {
    expect(resolveVisitRetry({ maxAttempts: 3 }).maxRetries).toBe(3);
    expect(resolveVisitRetry({ maxRetries: 4 }).maxRetries).toBe(4);
    expect(resolveVisitRetry(undefined).maxRetries).toBe(defaultVisitRetryPolicy.maxRetries);
    expect(resolveVisitRetry({ maxAttempts: 3 })).not.toHaveProperty('maxAttempts');
  });

  it('keeps the other fields of the defaults and of the caller', () => {
    expect(resolveVisitRetry({ baseDelayMs: 5 })).toEqual({ ...defaultVisitRetryPolicy, baseDelayMs: 5 });
  });

  it('refuses two different bounds instead of letting one silently win', () => {
    expect(() => checkVisitRetry({ maxAttempts: 2, maxRetries: 3 })).toThrow(/give maxAttempts or maxRetries, not both/);
    expect(() => checkVisitRetry({ maxAttempts: 3, maxRetries: 3 })).not.toThrow();
    expect(() => validateVisitOptions({ endpoint: 'http://127.0.0.1:1', retry: { maxAttempts: 2, maxRetries: 3 } })).toThrow(
      expect.objectContaining({ code: 'VB_USAGE' }),
    );
    expect(() => validateBulkOptions({ endpoint: 'http://127.0.0.1:1', kind: 'delete-where', selection: 'true', retry: { maxRetries: -1 } })).toThrow(/maxRetries must be an integer >= 0/);
  });
});
