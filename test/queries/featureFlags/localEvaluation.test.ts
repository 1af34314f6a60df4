import { describe, expect, it } from 'vitest';
import {
  type DefinitionsSource,
  LocalEvaluationAnswer,
  localEvaluationAnswer,
  notModified,
} from '../../../queries/featureFlags/localEvaluation.ts';

const row = {
  id: 7,
  project_id: 2,
  key: 'k',
  name: 'n',
  filters: { groups: [{ properties: [], rollout_percentage: 10 }] },
  active: true,
  deleted: false,
  ensure_experience_continuity: true,
  revision: 3,
};

describe('localEvaluationAnswer', () => {
  it('maps a definition row to the minimal flag shape, with an ETag that follows the content', () => {
    const { answer, etag } = localEvaluationAnswer({
      flags: [row],
      groupTypeMapping: { '0': 'company' },
      cohorts: {},
    });
    expect(LocalEvaluationAnswer.parse(answer)).toEqual(answer);
    expect(answer).toEqual({
      flags: [
        {
          id: 7,
          team_id: 2,
          name: 'n',
          key: 'k',
          filters: row.filters,
          deleted: false,
          active: true,
          ensure_experience_continuity: true,
          has_encrypted_payloads: false,
          version: 4,
          evaluation_runtime: 'all',
          evaluation_tags: [],
        },
      ],
      group_type_mapping: { '0': 'company' },
      cohorts: {},
    });
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    const same = localEvaluationAnswer({
      flags: [row],
      groupTypeMapping: { '0': 'company' },
      cohorts: {},
    });
    expect(same.etag).toBe(etag);
    const changes: DefinitionsSource[] = [
      { flags: [{ ...row, active: false }], groupTypeMapping: { '0': 'company' }, cohorts: {} },
      { flags: [row], groupTypeMapping: { '0': 'company', '1': 'team' }, cohorts: {} },
      { flags: [], groupTypeMapping: { '0': 'company' }, cohorts: {} },
    ];
    for (const changed of changes) expect(localEvaluationAnswer(changed).etag).not.toBe(etag);
  });
});

describe('notModified', () => {
  const etag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abd"', false],
    ['abc', false],
    ['', false],
    [undefined, false],
  ])('If-None-Match %s → %s', (header, expected) => {
    expect(notModified(header, etag)).toBe(expected);
  });
});
