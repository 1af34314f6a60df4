import { Redirect, Route, Switch } from 'wouter-preact';
import { FlagDetail } from './flagDetail.tsx';
import { EditFlag, NewFlag } from './flagForm.tsx';
import { FlagsList } from './flagsList.tsx';

/** The console's flag pages (app.tsx routes `/feature_flags/*?` here; `/flags/:id` redirects to a flag's page). */
export function FlagRoutes() {
  return (
    <Switch>
      <Route path="/feature_flags">
        <FlagsList />
      </Route>
      <Route path="/feature_flags/new">
        <NewFlag />
      </Route>
      <Route path="/feature_flags/:id/edit">{(p) => <EditFlag id={Number(p.id)} />}</Route>
      <Route path="/feature_flags/:id">{(p) => <FlagDetail id={Number(p.id)} />}</Route>
      <Route>
        <Redirect to="/feature_flags" replace />
      </Route>
    </Switch>
  );
}
