import { describe, expect, it } from 'vitest';
import {
  contentUrlToPath,
  formatApplicationStatus,
  formatChangeActions,
  formatLog,
  formatReindexing,
} from '../../src/cli/deploy-format.js';

describe('deploy output formatting', () => {
  it('indents continuation lines of multi-line log messages under the level', () => {
    expect(formatLog([{ time: 0, level: 'WARNING', message: 'first\nsecond' }])).toEqual([
      'WARNING first\n        second',
    ]);
  });

  it('groups reindex advice per cluster and names every kind of action', () => {
    const lines = formatChangeActions({
      restart: [
        {
          clusterName: 'content',
          clusterType: 'content',
          serviceType: 'searchnode',
          messages: ['m'],
          services: [{ serviceName: 'searchnode', hostName: 'h1' }],
        },
      ],
      refeed: [{ name: 'field-type-change', documentType: 'music', clusterName: 'content', messages: ['year'] }],
      reindex: [
        { name: 'indexing-change', documentType: 'music', clusterName: 'content', messages: ['a'] },
        { name: 'indexing-change', documentType: 'user', clusterName: 'content', messages: ['b'] },
        { name: 'indexing-change', documentType: 'log', clusterName: 'logs', messages: ['c'] },
      ],
    });
    expect(lines).toContain("restart  content 'content' searchnode [searchnode@h1]: m");
    expect(lines).toContain("refeed   music in 'content' (field-type-change): year");
    expect(lines).toContain('To reindex: vespa-bulk deploy reindex --cluster content --document-type music,user');
    expect(lines).toContain('To reindex: vespa-bulk deploy reindex --cluster logs --document-type log');
    expect(formatChangeActions({ restart: [], refeed: [], reindex: [] })).toEqual([]);
  });

  it('reads versions from either modelVersions or versions', () => {
    expect(
      formatApplicationStatus('a.b.c', {
        generation: 3,
        applicationPackageFileReference: 'f',
        versions: [{ generation: 3, engineVersion: '8.1.1' }],
      })[0],
    ).toBe('Application a.b.c: generation 3, Vespa 8.1.1, package f');
    expect(
      formatApplicationStatus('a.b.c', {
        generation: 3,
        applicationPackageFileReference: 'f',
        modelVersions: ['8.2.2'],
      }),
    ).toEqual(['Application a.b.c: generation 3, Vespa 8.2.2, package f']);
  });

  it('renders reindexing state and progress', () => {
    expect(
      formatReindexing({
        enabled: true,
        clusters: {
          content: { pending: [], ready: { music: { state: 'running', progress: 0.5 } } },
          other: { pending: [], ready: {} },
        },
      }),
    ).toEqual(['content/music: running 50.0%', 'other: no reindexing requested']);
  });

  it('turns content URLs into package paths', () => {
    expect(
      contentUrlToPath(
        'http://h:1/application/v2/tenant/t/application/a/environment/e/region/r/instance/i/content/schemas/my%20file.sd',
      ),
    ).toBe('schemas/my file.sd');
  });
});
