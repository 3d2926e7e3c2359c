import { Link } from '../router';
import { PageHeader } from '../ui';

export function NotFound() {
  return (
    <section>
      <PageHeader title="Page not found">There is no such page here, or it is for an account owner.</PageHeader>
      <p>
        <Link to="/settings/profile">Go to your profile</Link>
      </p>
    </section>
  );
}
