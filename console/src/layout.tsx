import { useQuery } from '@tanstack/react-query';
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, unwrap } from './api/client.ts';
import { allows, useProjectId } from './auth.ts';
import { PAGES } from './routes.ts';
import { session } from './session.ts';
import { Failure, Loading } from './states.tsx';

/** The projects the key reaches; the first is chosen when none is (or the chosen one is gone). */
function ProjectPicker() {
  const projectId = useProjectId();
  const projects = useQuery({
    queryKey: ['projects'],
    queryFn: async () =>
      unwrap(await api.GET('/api/projects/', { params: { query: { limit: 1000 } } })).results,
  });
  useEffect(() => {
    const list = projects.data;
    if (list?.length && !list.some((p) => p.id === projectId)) session.chooseProject(list[0]!.id);
  }, [projects.data, projectId]);
  if (projects.isPending) return <Loading what="projects" />;
  if (projects.isError) return <Failure error={projects.error} />;
  return (
    <div class="picker">
      <label for="project">Project</label>
      <select
        id="project"
        value={projectId ?? ''}
        onChange={(e) => session.chooseProject(Number(e.currentTarget.value))}
      >
        {projects.data.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name} (#{p.id})
          </option>
        ))}
      </select>
    </div>
  );
}

/** Navigation (only the pages the key's scopes can read), the project picker, sign out, and the page. */
export function Layout({
  scopes,
  label,
  children,
}: {
  scopes: string[];
  label: string;
  children: ComponentChildren;
}) {
  const [location] = useLocation();
  return (
    <div class="shell">
      <header>
        <a class="brand" href="/events">
          hogstream
        </a>
        <nav aria-label="Main">
          <ul>
            {PAGES.filter((p) => allows(scopes, p.scope)).map((p) => (
              <li key={p.path}>
                <Link href={p.path} aria-current={location.startsWith(p.path) ? 'page' : undefined}>
                  {p.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <ProjectPicker />
        <div class="who">
          <span title={scopes.join(' ')}>Key: {label}</span>
          <button type="button" onClick={() => session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">{useProjectId() === null ? <Loading what="the project" /> : children}</main>
    </div>
  );
}
