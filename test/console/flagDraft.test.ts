import { describe, expect, it } from 'vitest';
import { diffLines } from '../../console/src/pages/flags/changeDiff.ts';
import { draftOf, inputOf, rolloutSummary } from '../../console/src/pages/flags/flagDraft.ts';

/** The console's flag form: what an edit sends back, and how a history entry reads. */
const flag = (filters: Record<string, unknown>) =>
  ({
    id: 1,
    key: 'k',
    name: 'n',
    active: true,
    ensure_experience_continuity: false,
    filters,
  }) as unknown as NonNullable<Parameters<typeof draftOf>[0]>;

describe('flag form draft', () => {
  it('an edit keeps what the form does not show (holdouts, super groups, extra keys)', () => {
    const filters = {
      groups: [
        {
          properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro', 'team'] }],
          rollout_percentage: 30,
          variant: null,
          description: 'paying',
        },
      ],
      multivariate: null,
      payloads: { true: '{"a":1}' },
      holdout: { id: 4, exclusion_percentage: 10 },
      super_groups: [{ properties: [], rollout_percentage: 100 }],
    };
    const draft = draftOf(flag(filters));
    expect(draft.conditions[0]!.properties[0]!.value).toBe('pro, team');
    draft.conditions[0]!.rollout = '100';
    const sent = inputOf(draft).filters as typeof filters;
    expect(sent.holdout).toEqual(filters.holdout);
    expect(sent.super_groups).toEqual(filters.super_groups);
    expect(sent.payloads).toEqual({ true: '{"a":1}' });
    expect(sent.groups[0]).toEqual({ ...filters.groups[0], rollout_percentage: 100 });
  });

  it('a blank rollout is null (everyone matching); text the API must refuse is sent as typed', () => {
    const draft = draftOf(null);
    draft.conditions[0]!.rollout = '';
    expect((inputOf(draft).filters as { groups: unknown[] }).groups[0]).toMatchObject({
      rollout_percentage: null,
    });
    draft.conditions[0]!.rollout = 'half';
    expect((inputOf(draft).filters as { groups: unknown[] }).groups[0]).toMatchObject({
      rollout_percentage: 'half',
    });
  });

  it('a group flag sends its group type on the flag and on group properties; variants and their payloads', () => {
    const draft = draftOf(null);
    draft.groupType = '0';
    draft.conditions[0]!.properties.push({
      key: 'size',
      type: 'group',
      operator: 'gt',
      value: '10',
    });
    draft.variants = [
      { key: 'a', name: '', rollout: '50' },
      { key: 'b', name: '', rollout: '50' },
    ];
    draft.payloads = { a: '1', true: 'dropped: not a variant' };
    const sent = inputOf(draft).filters as Record<string, any>;
    expect(sent.aggregation_group_type_index).toBe(0);
    expect(sent.groups[0].properties[0]).toEqual({
      key: 'size',
      type: 'group',
      operator: 'gt',
      value: 10,
      group_type_index: 0,
    });
    expect(
      sent.multivariate.variants.map((v: { rollout_percentage: number }) => v.rollout_percentage),
    ).toEqual([50, 50]);
    expect(sent.payloads).toEqual({ a: '1' });
  });

  it('summarises the rollout for the list', () => {
    expect(rolloutSummary(flag({ groups: [{ properties: [], rollout_percentage: 20 }] }))).toBe(
      '20% of persons',
    );
    expect(rolloutSummary(flag({ groups: [] }))).toBe('No conditions: off for all persons');
  });
});

describe('history diff', () => {
  it('names each changed leaf with its path, before and after', () => {
    expect(
      diffLines(
        'filters',
        { groups: [{ rollout_percentage: 0, properties: [] }] },
        { groups: [{ rollout_percentage: 100, properties: [] }, { rollout_percentage: 5 }] },
      ),
    ).toEqual([
      { path: 'filters.groups[0].rollout_percentage', before: '0', after: '100' },
      { path: 'filters.groups[1]', before: '—', after: '{"rollout_percentage":5}' },
    ]);
    expect(diffLines('active', true, false)).toEqual([
      { path: 'active', before: 'true', after: 'false' },
    ]);
  });
});
