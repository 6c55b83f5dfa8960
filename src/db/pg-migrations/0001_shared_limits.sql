CREATE TABLE "login_failures" (
	"key" text PRIMARY KEY NOT NULL,
	"count" bigint NOT NULL,
	"last_ms" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_hits" (
	"key" text NOT NULL,
	"at_ms" bigint NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "rate_hits_key_at_ms_pk" PRIMARY KEY("key","at_ms")
);
--> statement-breakpoint
-- Added by hand (drizzle-kit does not manage functions). One call charges a request against one or more sliding
-- windows, all or nothing, for every process at once: the port of the in-process limiter (src/auth/rate-limit.ts).
-- Called as a statement of its own (autocommit): its locks and its relaxed commit end with that statement.
CREATE FUNCTION rate_limit_charge(p_keys text[], p_limits bigint[], p_ns bigint[], p_window_ms bigint, p_count boolean, p_now_ms bigint)
RETURNS TABLE (allowed boolean, remaining bigint, reset_seconds bigint)
LANGUAGE plpgsql AS $$
DECLARE
  t bigint := coalesce(p_now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  cnt integer := coalesce(array_length(p_keys, 1), 0);
  used bigint[] := array_fill(0::bigint, ARRAY[cnt]);
  fits boolean := true;
  counted boolean;
  h integer;
  i integer;
  total bigint;
  k bigint;
  oldest bigint;
BEGIN
  -- One advisory lock per key hash (in their own two-key space, apart from the store's one-key locks), taken in hash
  -- order so concurrent charges of overlapping keys cannot deadlock. Each statement below then sees every charge
  -- committed before the lock was granted.
  FOR h IN SELECT DISTINCT hashtext(x) AS hx FROM unnest(p_keys) AS x ORDER BY hx LOOP
    PERFORM pg_advisory_xact_lock(7310, h);
  END LOOP;
  -- A lost charge on a crash costs nothing worth a disk flush per request.
  PERFORM set_config('synchronous_commit', 'off', true);

  FOR i IN 1..cnt LOOP
    -- Entries leave the window at exactly p_window_ms, as in-process; this keeps each key's rows to one window.
    DELETE FROM rate_hits WHERE key = p_keys[i] AND at_ms <= t - p_window_ms;
    SELECT coalesce(sum(n), 0) INTO total FROM rate_hits WHERE key = p_keys[i];
    used[i] := total;
    fits := fits AND total + p_ns[i] <= p_limits[i];
  END LOOP;
  counted := fits AND p_count;
  IF counted THEN
    INSERT INTO rate_hits AS r (key, at_ms, n)
      SELECT x, t, y FROM unnest(p_keys, p_ns) AS u(x, y) WHERE y > 0
      ON CONFLICT (key, at_ms) DO UPDATE SET n = r.n + excluded.n;
  END IF;

  FOR i IN 1..cnt LOOP
    allowed := used[i] + p_ns[i] <= p_limits[i];
    total := used[i] + CASE WHEN counted THEN p_ns[i] ELSE 0 END;
    remaining := greatest(0, p_limits[i] - total);
    -- The next request (or these n, when refused) fits once the k oldest entries have left the window.
    k := total + CASE WHEN allowed THEN 1 ELSE p_ns[i] END - p_limits[i];
    IF k <= 0 THEN
      reset_seconds := 0;
    ELSE
      oldest := NULL;
      IF least(k, total) > 0 THEN
        SELECT w.at_ms INTO oldest FROM (
          SELECT r.at_ms, sum(r.n) OVER (ORDER BY r.at_ms) AS upto FROM rate_hits r WHERE r.key = p_keys[i]
        ) w WHERE w.upto >= least(k, total) ORDER BY w.at_ms LIMIT 1;
      END IF;
      reset_seconds := greatest(1, ceil((coalesce(oldest, t) + p_window_ms - t) / 1000.0));
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
