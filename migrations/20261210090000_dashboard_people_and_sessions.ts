import type { Knex } from 'knex';

/**
 * The dashboard's people and their sign-in (docs/dashboard.md). A person belongs to one account and signs in
 * with a password kept as an argon2id hash, and optionally a TOTP second factor (its secret sealed) with ten
 * single-use recovery codes (their SHA-256). The sign-in form names no account, so an address signs in to one
 * person only, anywhere: `sign_in_addresses` is the one global table here (a reference table when sharded by
 * account). Invitations, password resets and sessions are found by the SHA-256 of a secret (the link's, the
 * cookie's); the secret itself is never stored. Every other key carries `account_id` (the account key rule,
 * docs/decisions/sharding.md), with a plain index where a lookup starts from something else. API tokens gain
 * the person who holds them (null for tokens an operator minted), and the audit log the person who wrote.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE people (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      id text NOT NULL,
      email text NOT NULL,
      name text NOT NULL,
      role text NOT NULL CONSTRAINT people_role_check CHECK (role IN ('owner', 'member')),
      password_hash text NOT NULL,
      totp_secret text,
      totp_pending_secret text,
      totp_enabled_at bigint,
      totp_last_step bigint,
      recovery_code_hashes text[] NOT NULL DEFAULT '{}',
      created_at bigint NOT NULL,
      CONSTRAINT people_pkey PRIMARY KEY (account_id, id),
      CONSTRAINT people_account_email_unique UNIQUE (account_id, email)
    );
    CREATE INDEX people_id ON people (id);

    -- One address, one person, across every account: the sign-in form names no account.
    CREATE TABLE sign_in_addresses (
      email text PRIMARY KEY,
      account_id text NOT NULL,
      person_id text NOT NULL
    );

    CREATE TABLE person_invitations (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      id text NOT NULL,
      email text NOT NULL,
      role text NOT NULL CONSTRAINT person_invitations_role_check CHECK (role IN ('owner', 'member')),
      token_hash text NOT NULL,
      -- The person who invited (null: an operator, through the admin CLI); kept as written, without a key.
      invited_by text,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      accepted_at bigint,
      revoked_at bigint,
      CONSTRAINT person_invitations_pkey PRIMARY KEY (account_id, id),
      CONSTRAINT person_invitations_token_hash_unique UNIQUE (account_id, token_hash)
    );
    CREATE INDEX person_invitations_token_hash ON person_invitations (token_hash);

    CREATE TABLE dashboard_sessions (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      -- ses_…: the row's id, which the audit log and the limiter name; never the cookie's secret.
      id text NOT NULL,
      secret_hash text NOT NULL,
      csrf_token text NOT NULL,
      person_id text NOT NULL,
      created_at bigint NOT NULL,
      last_seen_at bigint NOT NULL,
      -- The absolute end (created_at + DASHBOARD_SESSION_MAX_MS); the idle end is last_seen_at + the idle lifetime.
      expires_at bigint NOT NULL,
      ended_at bigint,
      CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (account_id, id),
      CONSTRAINT dashboard_sessions_secret_hash_unique UNIQUE (account_id, secret_hash),
      CONSTRAINT dashboard_sessions_person_fk FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE CASCADE
    );
    CREATE INDEX dashboard_sessions_secret_hash ON dashboard_sessions (secret_hash);
    CREATE INDEX dashboard_sessions_person ON dashboard_sessions (account_id, person_id);

    CREATE TABLE password_resets (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      id text NOT NULL,
      person_id text NOT NULL,
      token_hash text NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      used_at bigint,
      CONSTRAINT password_resets_pkey PRIMARY KEY (account_id, id),
      CONSTRAINT password_resets_token_hash_unique UNIQUE (account_id, token_hash),
      CONSTRAINT password_resets_person_fk FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE CASCADE
    );
    CREATE INDEX password_resets_token_hash ON password_resets (token_hash);
    CREATE INDEX password_resets_person ON password_resets (account_id, person_id);

    ALTER TABLE api_tokens ADD COLUMN person_id text;
    ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_person_fk
      FOREIGN KEY (account_id, person_id) REFERENCES people (account_id, id) ON DELETE SET NULL (person_id);
    CREATE INDEX api_tokens_person ON api_tokens (account_id, person_id) WHERE person_id IS NOT NULL;

    ALTER TABLE audit_log ADD COLUMN person_id text, ADD COLUMN person_email text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE audit_log DROP COLUMN person_email, DROP COLUMN person_id;
    DROP INDEX api_tokens_person;
    ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_person_fk;
    ALTER TABLE api_tokens DROP COLUMN person_id;
    DROP TABLE password_resets;
    DROP TABLE dashboard_sessions;
    DROP TABLE person_invitations;
    DROP TABLE sign_in_addresses;
    DROP TABLE people;
  `);
}
