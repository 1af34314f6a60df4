import { Link, Redirect } from 'wouter-preact';
import { FunnelsPage } from './funnels.tsx';
import './insights.css';
import { RetentionPage } from './retention.tsx';
import { TrendsPage } from './trends.tsx';

const KINDS = [
  { kind: 'trends', label: 'Trends', Page: TrendsPage },
  { kind: 'funnels', label: 'Funnels', Page: FunnelsPage },
  { kind: 'retention', label: 'Retention', Page: RetentionPage },
] as const;

/** `/insights/trends|funnels|retention`: one insight at a time, its kind in the path and its parameters in the query. */
export function InsightsPage({ kind }: { kind: string | undefined }) {
  const current = KINDS.find((k) => k.kind === kind);
  if (!current) return <Redirect to="/insights/trends" replace />;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Insights: {current.label}</h1>
      <nav aria-label="Insight kinds" class="tabs">
        <ul>
          {KINDS.map((k) => (
            <li key={k.kind}>
              <Link
                href={`/insights/${k.kind}`}
                aria-current={k.kind === current.kind ? 'page' : undefined}
              >
                {k.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <current.Page key={current.kind} />
    </section>
  );
}
