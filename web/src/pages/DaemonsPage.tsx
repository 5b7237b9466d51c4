import { DaemonPage } from "../daemons/DaemonPage";
import { DaemonsListPage } from "../daemons/DaemonsListPage";

export function DaemonsPage({ id }: { id?: string }) {
  return id ? <DaemonPage id={id} /> : <DaemonsListPage />;
}
