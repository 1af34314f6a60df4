import { describe, expect, it } from 'vitest';
import { insightDecider } from '../../../commands/insights/insightDecider.ts';
import type { InsightCreated, InsightFields } from '../../../commands/insights/model/insight.ts';
import { filtersOfQuery } from '../../../commands/insights/model/insightQuery.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const given = DeciderSpecification.for(insightDecider);
const filters = { insight: 'TRENDS', events: [{ id: '$pageview' }] };
const fields: InsightFields = {
  name: 'Pageviews',
  description: '',
  filters,
  query: null,
  saved: false,
  favorited: false,
};
const created: InsightCreated = {
  type: 'InsightCreated',
  data: {
    insightId: 7,
    projectId: 1,
    shortId: 'AbCd1234',
    fields,
    tiles: [{ dashboardId: 3, tileId: 50 }],
    createdAt: '2024-09-10T00:00:00.000Z',
    createdByUserId: 2,
  },
};
const at = '2024-09-11T00:00:00.000Z';
const patch = (rest: Record<string, unknown>) =>
  ({ type: 'PatchInsight', insightId: 7, projectId: 1, changes: {}, at, ...rest }) as const;

describe('insightDecider', () => {
  it('creates once, with a tile per dashboard', () => {
    const create = {
      type: 'CreateInsight',
      insightId: 7,
      projectId: 1,
      shortId: 'AbCd1234',
      fields,
      dashboards: { ids: [3, 3], freshTileIds: [50, 51] },
      createdAt: '2024-09-10T00:00:00.000Z',
      createdByUserId: 2,
    } as const;
    given([]).when(create).then([created]);
    given([created]).when(create).thenNothing();
  });

  it('records only what changes; a dashboard it is on keeps its tile', () => {
    given([created])
      .when(patch({ changes: { name: 'Pageviews', saved: true } }))
      .then([{ type: 'InsightUpdated', data: { insightId: 7, changes: { saved: true }, at } }]);
    given([created])
      .when(patch({ dashboards: { ids: [4, 3], freshTileIds: [60, 61] } }))
      .then([
        {
          type: 'InsightDashboardsSet',
          data: {
            insightId: 7,
            tiles: [
              { dashboardId: 4, tileId: 60 },
              { dashboardId: 3, tileId: 50 },
            ],
          },
        },
      ]);
    given([created])
      .when(patch({ dashboards: { ids: [3], freshTileIds: [70] } }))
      .thenNothing();
  });

  it('soft-deletes, then answers 404 until restored', () => {
    const deleted = { type: 'InsightSoftDeleted', data: { insightId: 7 } } as const;
    given([created])
      .when(patch({ changes: { deleted: true } }))
      .then([deleted]);
    given([created, deleted])
      .when(patch({ changes: { name: 'x' } }))
      .thenFails({ kind: 'not_found' });
    given([created, deleted])
      .when(patch({ changes: { deleted: false } }))
      .then([{ type: 'InsightRestored', data: { insightId: 7 } }]);
    given([created])
      .when({ ...patch({}), projectId: 2 })
      .thenFails({ kind: 'not_found' });
  });

  it('folds an old log whose insight streams hold the retired InsightRefreshed', () => {
    // results were once appended as events; they are derived data, skipped by every fold now
    const refreshed = {
      type: 'InsightRefreshed',
      data: { insightId: 7, projectId: 1, result: [1], lastRefresh: at },
    } as unknown as InsightCreated;
    given([created, refreshed])
      .when(patch({ changes: { saved: true } }))
      .then([{ type: 'InsightUpdated', data: { insightId: 7, changes: { saved: true }, at } }]);
    given([refreshed, created])
      .when(patch({ changes: { deleted: true } }))
      .then([{ type: 'InsightSoftDeleted', data: { insightId: 7 } }]);
  });
});

describe('filtersOfQuery', () => {
  it('maps a TrendsQuery onto legacy filters', () => {
    expect(
      filtersOfQuery({
        kind: 'InsightVizNode',
        source: {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', custom_name: 'Users' }],
          dateRange: { date_from: '-7d', date_to: null },
          interval: 'week',
          breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
          trendsFilter: { display: 'ActionsTable' },
        },
      }),
    ).toEqual({
      ok: true,
      filters: {
        insight: 'TRENDS',
        events: [{ id: '$pageview', type: 'events', order: 0, math: 'dau', name: 'Users' }],
        date_from: '-7d',
        interval: 'week',
        breakdown: '$browser',
        breakdown_type: 'event',
        display: 'ActionsTable',
      },
    });
  });

  it('refuses kinds, series and maths it cannot compute', () => {
    expect(filtersOfQuery({ kind: 'HogQLQuery', query: 'select 1' }).ok).toBe(false);
    expect(
      filtersOfQuery({ kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: 1 }] }).ok,
    ).toBe(false);
    expect(
      filtersOfQuery({
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'x', math: 'median' }],
      }).ok,
    ).toBe(false);
  });
});
