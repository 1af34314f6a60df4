import { useEffect, useState } from 'preact/hooks';
import { Redirect, Route, Switch } from 'wouter-preact';
import { useCurrentKey, useSessionKey } from './auth.ts';
import { Layout } from './layout.tsx';
import { CohortRoutes } from './pages/cohorts/cohortRoutes.tsx';
import { EventDetail } from './pages/eventDetail.tsx';
import { EventsPage } from './pages/events.tsx';
import { FlagRoutes } from './pages/flags/flagRoutes.tsx';
import { InsightsPage } from './pages/insights/insightsPage.tsx';
import { NotBuilt } from './pages/notBuilt.tsx';
import { OperationsPage } from './pages/operations/operationsPage.tsx';
import { PersonPage } from './pages/persons/personPage.tsx';
import { PersonsPage } from './pages/persons/personsList.tsx';
import { SignIn } from './pages/signIn.tsx';
import { PAGES } from './routes.ts';
import { session } from './session.ts';
import { Loading } from './states.tsx';

/** Signed out → the sign-in form; a key the server refuses → signed out again with its reason. */
export function App() {
  const key = useSessionKey();
  const current = useCurrentKey(key);
  // The server's reason for refusing the last key, kept across the sign-out it causes.
  const [refused, setRefused] = useState<string>();
  const failure = current.isError ? current.error.message : undefined;
  useEffect(() => {
    if (failure === undefined) return;
    setRefused(failure);
    session.signOut();
  }, [failure]);
  if (key === null || failure !== undefined) return <SignIn failure={failure ?? refused} />;
  if (current.isPending || !current.data) return <Loading what="your key" />;
  return (
    <Layout scopes={current.data.scopes} label={current.data.label}>
      <Switch>
        <Route path="/events">
          <EventsPage />
        </Route>
        <Route path="/events/:id">{(params) => <EventDetail id={params.id} />}</Route>
        <Route path="/insights/:kind?">{(params) => <InsightsPage kind={params.kind} />}</Route>
        <Route path="/persons">
          <PersonsPage />
        </Route>
        <Route path="/persons/:ref">
          {(params) => <PersonPage key={params.ref} personRef={decodeURIComponent(params.ref)} />}
        </Route>
        <Route path="/feature_flags/*?">
          <FlagRoutes />
        </Route>
        <Route path="/flags/:id">
          {(params) => <Redirect to={`/feature_flags/${params.id}`} replace />}
        </Route>
        <Route path="/cohorts/*?">
          <CohortRoutes />
        </Route>
        <Route path="/operations">
          <OperationsPage />
        </Route>
        {PAGES.filter((p) => p.path !== '/events').map((p) => (
          <Route key={p.path} path={p.path} nest>
            <NotBuilt title={p.label} />
          </Route>
        ))}
        <Route path="/flags/:id">
          <NotBuilt title="Feature flags" />
        </Route>
        <Route>
          <Redirect to="/events" replace />
        </Route>
      </Switch>
    </Layout>
  );
}
