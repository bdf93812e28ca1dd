import { describe, expect, it } from 'vitest';
import { resultOperations } from '../../src/transform/transform.js';

describe('resultOperations', () => {
  it('refuses results that are not operations', () => {
    expect(() => resultOperations(42)).toThrow(/returned number/);
    expect(() => resultOperations([{ put: 'x', fields: {} }, null])).toThrow(/returned null/);
    expect(resultOperations([])).toEqual([]);
  });
});
