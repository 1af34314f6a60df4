import { Redirect, Route, Switch } from 'wouter-preact';
import { CohortDetail } from './cohortDetail.tsx';
import { NewCohort } from './cohortForm.tsx';
import { CohortsList } from './cohortsList.tsx';
import './cohorts.css';

/** The console's cohort pages (app.tsx routes `/cohorts/*?` here). */
export function CohortRoutes() {
  return (
    <Switch>
      <Route path="/cohorts">
        <CohortsList />
      </Route>
      <Route path="/cohorts/new">
        <NewCohort />
      </Route>
      <Route path="/cohorts/:id">
        {(p) =>
          /^\d+$/.test(p.id) ? (
            <CohortDetail key={p.id} id={Number(p.id)} />
          ) : (
            <Redirect to="/cohorts" replace />
          )
        }
      </Route>
    </Switch>
  );
}
