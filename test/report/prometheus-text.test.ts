import { describe, expect, it } from 'vitest';
import { prometheusText } from '../../src/report/prometheus-text.js';

describe('the Prometheus text format', () => {
  it('writes HELP and TYPE before each family, labels quoted, special numbers as Prometheus spells them', () => {
    const text = prometheusText([
      {
        name: 'a_total',
        help: 'A counter',
        type: 'counter',
        samples: [
          { labels: { result: 'ok' }, value: 3 },
          { labels: { result: 'failed' }, value: 0 },
        ],
      },
      { name: 'b', help: 'A gauge', type: 'gauge', samples: [{ value: 1.5 }] },
      {
        name: 'h',
        help: 'H',
        type: 'histogram',
        samples: [
          { name: 'h_bucket', labels: { le: '+Inf' }, value: Infinity },
          { name: 'h_count', value: NaN },
        ],
      },
    ]);
    expect(text).toBe(
      [
        '# HELP a_total A counter',
        '# TYPE a_total counter',
        'a_total{result="ok"} 3',
        'a_total{result="failed"} 0',
        '# HELP b A gauge',
        '# TYPE b gauge',
        'b 1.5',
        '# HELP h H',
        '# TYPE h histogram',
        'h_bucket{le="+Inf"} +Inf',
        'h_count NaN',
        '',
      ].join('\n'),
    );
  });

  it('escapes backslashes, quotes and newlines in label values, and backslashes and newlines in help', () => {
    const text = prometheusText([
      { name: 'x', help: 'two\nlines \\ here', type: 'gauge', samples: [{ labels: { v: 'a"b\\c\nd' }, value: 1 }] },
    ]);
    expect(text).toContain('# HELP x two\\nlines \\\\ here\n');
    expect(text).toContain('x{v="a\\"b\\\\c\\nd"} 1\n');
  });
});
