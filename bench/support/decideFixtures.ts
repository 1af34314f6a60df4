/**
 * bench/decide's data: the same 50 flags as PostHog flag definitions (ours) and as Unleash toggles
 * (the peer), and the 10,000 persons both are asked about.
 */
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'CA', 'AU', 'NL'] as const;
const DOMAINS = 10;

export const personOf = (i: number) => ({
  id: `person-${i}`,
  email: `user${i}@domain${i % DOMAINS}.example.com`,
  country: COUNTRIES[i % COUNTRIES.length]!,
});

type Kind =
  | { kind: 'rollout'; pct: number }
  | { kind: 'variants' }
  | { kind: 'email'; needle: string }
  | {
      kind: 'country';
      country: string;
    };

/** 20 rollouts (5 %…100 %), 15 multivariate (3 variants, JSON payloads), 8 email, 7 country. */
function kinds(): { key: string; k: Kind }[] {
  return [
    ...Array.from({ length: 20 }, (_, i) => ({
      key: `rollout-${i}`,
      k: { kind: 'rollout', pct: 5 * (i + 1) } as Kind,
    })),
    ...Array.from({ length: 15 }, (_, i) => ({
      key: `experiment-${i}`,
      k: { kind: 'variants' } as Kind,
    })),
    ...Array.from({ length: 8 }, (_, i) => ({
      key: `email-${i}`,
      k: { kind: 'email', needle: `@DOMAIN${i}.` } as Kind,
    })),
    ...Array.from({ length: 7 }, (_, i) => ({
      key: `country-${i}`,
      k: { kind: 'country', country: COUNTRIES[i]! } as Kind,
    })),
  ];
}

const VARIANTS = [
  { key: 'control', pct: 34 },
  { key: 'test-a', pct: 33 },
  { key: 'test-b', pct: 33 },
];
const payload = (variant: string) => JSON.stringify({ variant, color: 'blue', limits: [1, 2, 3] });

/** Bodies for `POST /api/projects/:id/feature_flags/`. */
export function flagSet() {
  return kinds().map(({ key, k }) => {
    const condition = (properties: unknown[], rollout_percentage: number) => ({
      properties,
      rollout_percentage,
    });
    const filters =
      k.kind === 'rollout'
        ? { groups: [condition([], k.pct)] }
        : k.kind === 'variants'
          ? {
              groups: [condition([], 100)],
              multivariate: {
                variants: VARIANTS.map((v) => ({ key: v.key, rollout_percentage: v.pct })),
              },
              payloads: Object.fromEntries(VARIANTS.map((v) => [v.key, payload(v.key)])),
            }
          : k.kind === 'email'
            ? {
                groups: [
                  condition(
                    [{ key: 'email', type: 'person', operator: 'icontains', value: k.needle }],
                    100,
                  ),
                ],
              }
            : {
                groups: [
                  condition(
                    [{ key: 'country', type: 'person', operator: 'exact', value: [k.country] }],
                    100,
                  ),
                ],
              };
    return { key, name: key, active: true, filters };
  });
}

/** The same toggles for Unleash's admin API: a flexibleRollout strategy each, stickiness userId. */
export function unleashToggles() {
  return kinds().map(({ key, k }) => {
    const constraints =
      k.kind === 'email'
        ? [
            {
              contextName: 'email',
              operator: 'STR_CONTAINS',
              values: [k.needle],
              caseInsensitive: true,
            },
          ]
        : k.kind === 'country'
          ? [{ contextName: 'country', operator: 'IN', values: [k.country] }]
          : [];
    const variants =
      k.kind === 'variants'
        ? VARIANTS.map((v, i) => ({
            name: v.key,
            weight: i === 0 ? 334 : 333,
            weightType: 'variable',
            stickiness: 'userId',
            payload: { type: 'json', value: payload(v.key) },
          }))
        : [];
    return {
      name: key,
      strategy: {
        name: 'flexibleRollout',
        constraints,
        parameters: {
          rollout: String(k.kind === 'rollout' ? k.pct : 100),
          stickiness: 'userId',
          groupId: key,
        },
        ...(variants.length ? { variants } : {}),
      },
    };
  });
}
