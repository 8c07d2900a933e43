-- schema.sql — the glassbox event store, schema version 8.
--
-- One SQLite file holds many runs. This file creates a new store; it is
-- compiled into the library (no file is read at run time) and executed in
-- one transaction with the two PRAGMAs at its end, so a store is either
-- complete or absent. A store is recognised by application_id 'GBOX'
-- (0x47424F58) and versioned by user_version; a later version adds a
-- migration step (version N -> N+1) to summary/store/schema.c and bumps
-- both this file and GB_STORE_SCHEMA_VERSION.
--
-- Conventions:
--   * steps are INTEGER, wall times REAL seconds since the Unix epoch;
--   * SQLite stores a NaN REAL as NULL: wherever a REAL value may be NaN,
--     NULL means NaN (+Inf and -Inf are stored as themselves);
--   * BLOBs hold little-endian arrays of int64 / IEEE-754 double, which
--     keeps every NaN bit pattern exact.

-- A training run: one name in the store, continued if opened again.
-- status (schema 4): 'running' from a writer's open to its close, then
-- 'done', or what the program said ('failed', 'killed'); '' in runs an
-- older glassbox wrote. status_host/status_pid: the process that set it,
-- so a reader can tell a 'running' run whose process is gone (SIGKILL).
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    start_time      REAL NOT NULL,
    last_write_time REAL NOT NULL,
    host            TEXT NOT NULL DEFAULT '',
    pid             INTEGER NOT NULL DEFAULT 0,
    command_line    TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT '',
    status_host     TEXT NOT NULL DEFAULT '',
    status_pid      INTEGER NOT NULL DEFAULT 0
);

-- Free-form hyperparameters, to compare runs. `value` is the text form;
-- for numbers is_number = 1 and `number` holds the value (NULL: NaN).
CREATE TABLE hparams (
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    is_number INTEGER NOT NULL DEFAULT 0,
    number    REAL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

-- The experiment's hyperparameters and metrics (schema 4), declared once
-- per store (TensorBoard's hparams_config), so the HParams dashboard knows
-- each one's type and domain and which metrics to show; redeclaring a name
-- replaces it. type: 'real', 'int', 'string', 'bool'; domain: 'interval'
-- (min, max), 'discrete' (`values`, a JSON array) or '' (none given).
-- position: the order of declaration, the dashboard's column order.
CREATE TABLE hparam_domains (
    name         TEXT PRIMARY KEY,
    display_name TEXT NOT NULL DEFAULT '',
    description  TEXT NOT NULL DEFAULT '',
    type         TEXT NOT NULL,
    domain       TEXT NOT NULL DEFAULT '',
    min          REAL,
    max          REAL,
    "values"     TEXT NOT NULL DEFAULT '[]',
    position     INTEGER NOT NULL
) WITHOUT ROWID;

-- A metric of the experiment: a scalar tag every run writes, and whether
-- a higher value is better (accuracy) or a lower one (loss).
CREATE TABLE hparam_metrics (
    tag              TEXT PRIMARY KEY,
    display_name     TEXT NOT NULL DEFAULT '',
    higher_is_better INTEGER NOT NULL,
    position         INTEGER NOT NULL
) WITHOUT ROWID;

-- A series in a run. kind: 1 scalar, 2 histogram, 3 image, 4 text,
-- 5 graph, 6 pr_curve (schema 4), 7 embedding, 8 audio (schema 6). count/min_step/max_step/last_wall_time summarise the events
-- committed so far (maintained by the writers, merged additively so that
-- several processes may write one tag). max_chunk_span is the largest
-- last_step - first_step of the tag's scalar chunks (for range seeks).
CREATE TABLE tags (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    name           TEXT NOT NULL,
    kind           INTEGER NOT NULL,
    count          INTEGER NOT NULL DEFAULT 0,
    min_step       INTEGER,
    max_step       INTEGER,
    last_wall_time REAL,
    max_chunk_span INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, name, kind)
);

-- Raw scalar points, in chunks of up to a few hundred points of one tag
-- written together: `points` is `count` records of
-- {int64 step; double wall_time; double value} (24 bytes each) in write
-- order; first_step/last_step are the smallest/largest step inside.
-- Chunks make ingest cheap (one row per many points) and keep NaN exact.
CREATE TABLE scalar_chunks (
    id         INTEGER PRIMARY KEY,
    tag_id     INTEGER NOT NULL REFERENCES tags(id),
    first_step INTEGER NOT NULL,
    last_step  INTEGER NOT NULL,
    count      INTEGER NOT NULL,
    points     BLOB NOT NULL
);
CREATE INDEX scalar_chunks_by_step ON scalar_chunks (tag_id, first_step);

-- Multi-resolution rollups of every scalar tag, maintained at write time.
-- Level L (2..15) cuts the step axis into buckets of 16^L steps:
-- bucket = floor(step / 16^L). (Finer ranges are read from the chunks.) Each row aggregates the points of one
-- bucket: count (all points), nan/posinf/neginf counts, and over the
-- finite points min, max (NULL when none) and sum (mean = sum / finite
-- count); first/last value at first_step/last_step (NULL: NaN). Writers
-- add deltas (sum counts, min of mins...), so flushes and processes merge.
CREATE TABLE scalar_rollups (
    tag_id         INTEGER NOT NULL,
    level          INTEGER NOT NULL,
    bucket         INTEGER NOT NULL,
    first_step     INTEGER NOT NULL,
    last_step      INTEGER NOT NULL,
    first_value    REAL,
    last_value     REAL,
    min            REAL,
    max            REAL,
    sum            REAL NOT NULL,
    count          INTEGER NOT NULL,
    nan_count      INTEGER NOT NULL,
    posinf_count   INTEGER NOT NULL,
    neginf_count   INTEGER NOT NULL,
    last_wall_time REAL NOT NULL,
    PRIMARY KEY (tag_id, level, bucket)
) WITHOUT ROWID;

-- Histograms: exact statistics over the finite values (count = finite
-- values; min/max NULL when none), non-finite values counted apart, and
-- `buckets` = bucket_count + 1 ascending edges followed by bucket_count
-- counts (doubles).
CREATE TABLE histograms (
    id           INTEGER PRIMARY KEY,
    tag_id       INTEGER NOT NULL REFERENCES tags(id),
    step         INTEGER NOT NULL,
    wall_time    REAL NOT NULL,
    min          REAL,
    max          REAL,
    count        REAL NOT NULL,
    sum          REAL NOT NULL,
    sum_squares  REAL NOT NULL,
    nan_count    INTEGER NOT NULL,
    posinf_count INTEGER NOT NULL,
    neginf_count INTEGER NOT NULL,
    bucket_count INTEGER NOT NULL,
    buckets      BLOB NOT NULL
);
CREATE INDEX histograms_by_step ON histograms (tag_id, step);

-- Images as PNG files; sample_index is the image's place in its batch.
CREATE TABLE images (
    id           INTEGER PRIMARY KEY,
    tag_id       INTEGER NOT NULL REFERENCES tags(id),
    step         INTEGER NOT NULL,
    wall_time    REAL NOT NULL,
    sample_index INTEGER NOT NULL,
    width        INTEGER NOT NULL,
    height       INTEGER NOT NULL,
    channels     INTEGER NOT NULL,
    png          BLOB NOT NULL
);
CREATE INDEX images_by_step ON images (tag_id, step, sample_index);

CREATE TABLE texts (
    id        INTEGER PRIMARY KEY,
    tag_id    INTEGER NOT NULL REFERENCES tags(id),
    step      INTEGER NOT NULL,
    wall_time REAL NOT NULL,
    value     TEXT NOT NULL
);
CREATE INDEX texts_by_step ON texts (tag_id, step);

-- Graphs (traced functions, models) as text in `format` ("text", "json").
CREATE TABLE graphs (
    id        INTEGER PRIMARY KEY,
    tag_id    INTEGER NOT NULL REFERENCES tags(id),
    step      INTEGER NOT NULL,
    wall_time REAL NOT NULL,
    format    TEXT NOT NULL,
    content   TEXT NOT NULL
);
CREATE INDEX graphs_by_step ON graphs (tag_id, step);

-- Precision-recall curves (schema 4), TensorBoard's pr_curves: per step
-- the (weighted) true/false positive/negative counts at num_thresholds
-- thresholds i / (num_thresholds - 1); `counts` is 4 * num_thresholds
-- doubles: TP[0..T-1], FP[...], TN[...], FN[...]. Never the predictions.
CREATE TABLE pr_curves (
    id             INTEGER PRIMARY KEY,
    tag_id         INTEGER NOT NULL REFERENCES tags(id),
    step           INTEGER NOT NULL,
    wall_time      REAL NOT NULL,
    num_thresholds INTEGER NOT NULL,
    counts         BLOB NOT NULL
);
CREATE INDEX pr_curves_by_step ON pr_curves (tag_id, step);

-- Engine events, one row each, in arrival order (id). step is NULL when
-- no summary step was set; detail is NULL or a JSON object with fields
-- later versions add without a schema change.

-- Every trace and retrace of a function, with its reason.
CREATE TABLE traces (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    step         INTEGER,
    wall_time    REAL NOT NULL,
    function     TEXT NOT NULL,
    is_retrace   INTEGER NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    signature    TEXT NOT NULL DEFAULT '',
    duration_us  REAL,
    nodes_before INTEGER NOT NULL DEFAULT -1,
    nodes_after  INTEGER NOT NULL DEFAULT -1,
    detail       TEXT
);
CREATE INDEX traces_by_run ON traces (run_id, function);

-- The graphs of a trace, after the passes and as traced (schema 3): kept
-- apart from the traces row, whose detail then holds only small fields
-- (and has_graph / has_graph_traced), so that listing a run's traces reads
-- the same few pages whatever the size of their graphs.
CREATE TABLE trace_graphs (
    trace_id     INTEGER PRIMARY KEY REFERENCES traces(id),
    graph        TEXT,
    graph_traced TEXT
);

-- Each traced function's call counters, as last reported (schema 2).
CREATE TABLE function_stats (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    function     TEXT NOT NULL,
    wall_time    REAL NOT NULL,
    calls        INTEGER NOT NULL DEFAULT 0,
    cache_hits   INTEGER NOT NULL DEFAULT 0,
    traces       INTEGER NOT NULL DEFAULT 0,
    trace_ms     REAL NOT NULL DEFAULT 0,
    concrete     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, function)
);

-- NaN/Inf alerts of the numerics checks, naming the op that made them.
CREATE TABLE numerics (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    step         INTEGER,
    wall_time    REAL NOT NULL,
    op_type      TEXT NOT NULL,
    op_name      TEXT NOT NULL DEFAULT '',
    function     TEXT NOT NULL DEFAULT '',
    scope_path   TEXT NOT NULL DEFAULT '',
    forward_op   TEXT NOT NULL DEFAULT '',
    nan_count    INTEGER NOT NULL DEFAULT 0,
    posinf_count INTEGER NOT NULL DEFAULT 0,
    neginf_count INTEGER NOT NULL DEFAULT 0,
    message      TEXT NOT NULL DEFAULT '',
    detail       TEXT
);
CREATE INDEX numerics_by_run ON numerics (run_id);

-- Kernel timings (while op timing is on). function: the traced function
-- whose graph ran the op, '' when it ran eagerly (schema 3).
CREATE TABLE op_timings (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    step        INTEGER,
    wall_time   REAL NOT NULL,
    op_type     TEXT NOT NULL DEFAULT '',
    op_name     TEXT NOT NULL DEFAULT '',
    device      TEXT NOT NULL DEFAULT '',
    duration_us REAL NOT NULL,
    function    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX op_timings_by_run ON op_timings (run_id, op_name);

-- Warnings and device placements. kind: 'warning' or 'placement'.
CREATE TABLE messages (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    step      INTEGER,
    wall_time REAL NOT NULL,
    kind      TEXT NOT NULL,
    op_type   TEXT NOT NULL DEFAULT '',
    op_name   TEXT NOT NULL DEFAULT '',
    device    TEXT NOT NULL DEFAULT '',
    message   TEXT NOT NULL
);
CREATE INDEX messages_by_run ON messages (run_id);


-- Profiler captures (schema 5): one row per capture (threads: a JSON
-- array of the thread names, by index), and one row per recorded event,
-- inserted by thread and then start time; gemm_peak: the FLOP/s of a
-- GEMM measured when the capture started (the ops table's yardstick). kind: op, step, input_wait,
-- map, prefetch, optimizer, collective, comm_wait (gb_profiler.h). Times
-- in microseconds since the capture started.
CREATE TABLE profiles (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    wall_time    REAL NOT NULL,
    duration_us  REAL NOT NULL,
    rank         INTEGER NOT NULL DEFAULT 0,
    threads      TEXT NOT NULL,
    record_count INTEGER NOT NULL,
    dropped      INTEGER NOT NULL DEFAULT 0,
    gemm_peak    REAL NOT NULL DEFAULT 0
);
CREATE INDEX profiles_by_run ON profiles (run_id);
CREATE TABLE profile_events (
    id          INTEGER PRIMARY KEY,
    profile_id  INTEGER NOT NULL REFERENCES profiles(id),
    kind        TEXT NOT NULL,
    thread      INTEGER NOT NULL,
    step        INTEGER,
    start_us    REAL NOT NULL,
    dur_us      REAL NOT NULL,
    name        TEXT NOT NULL,
    op_type     TEXT NOT NULL DEFAULT '',
    function    TEXT NOT NULL DEFAULT '',
    backward    INTEGER NOT NULL DEFAULT 0,
    shapes      TEXT NOT NULL DEFAULT '',
    flops       REAL NOT NULL DEFAULT 0,
    bytes       INTEGER NOT NULL DEFAULT 0,
    live_bytes  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX profile_events_by_profile ON profile_events (profile_id);

-- Embeddings for the projector (schema 6), TensorBoard's projector: per
-- step a matrix of n points of dimension dim, `vectors` n * dim float32
-- (little-endian, row-major); `metadata` one line per point with its
-- columns separated by tabs, after a header line naming the columns
-- ('' when the points have none); `sprite` NULL or a PNG atlas of one
-- sprite_width x sprite_height image per point, row-major in a square
-- grid. The writer bounds every BLOB (gb_summary.h).
CREATE TABLE embeddings (
    id            INTEGER PRIMARY KEY,
    tag_id        INTEGER NOT NULL REFERENCES tags(id),
    step          INTEGER NOT NULL,
    wall_time     REAL NOT NULL,
    n             INTEGER NOT NULL,
    dim           INTEGER NOT NULL,
    vectors       BLOB NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '',
    sprite        BLOB,
    sprite_width  INTEGER NOT NULL DEFAULT 0,
    sprite_height INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX embeddings_by_step ON embeddings (tag_id, step);

-- Audio clips (schema 6), tf.summary.audio: `wav` a 16-bit PCM WAV file;
-- clipped: how many samples were outside [-1, 1] and were clipped.
CREATE TABLE audio (
    id           INTEGER PRIMARY KEY,
    tag_id       INTEGER NOT NULL REFERENCES tags(id),
    step         INTEGER NOT NULL,
    wall_time    REAL NOT NULL,
    sample_index INTEGER NOT NULL,
    sample_rate  INTEGER NOT NULL,
    channels     INTEGER NOT NULL,
    frames       INTEGER NOT NULL,
    clipped      INTEGER NOT NULL DEFAULT 0,
    wav          BLOB NOT NULL
);
CREATE INDEX audio_by_step ON audio (tag_id, step, sample_index);

-- Training-health alerts (schema 7): what the engine's health checks
-- found (gb_health.h), one row each. kind: vanishing_gradient,
-- dead_units, loss_spike... (text, so a later kind needs no schema
-- change); severity: 1 info, 2 warning, 3 critical; layer '' for the
-- model as a whole (the loss, the global gradient norm), variable '' for
-- a layer's output; value: the figure that tripped the check, threshold
-- the bound it crossed (NULL: NaN); figures: every figure the check used,
-- a JSON object ('{}' when none); message: the one-line report; advice:
-- what it usually means and what to try. The writer bounds the texts
-- (gb_reader.h). The per-layer figures themselves are scalar tags
-- health/<layer>/<figure>. The index serves the Health page's order:
-- most severe first, then earliest.
CREATE TABLE health (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    step      INTEGER,
    wall_time REAL NOT NULL,
    kind      TEXT NOT NULL,
    severity  INTEGER NOT NULL,
    layer     TEXT NOT NULL DEFAULT '',
    variable  TEXT NOT NULL DEFAULT '',
    value     REAL,
    threshold REAL,
    figures   TEXT NOT NULL DEFAULT '{}',
    message   TEXT NOT NULL DEFAULT '',
    advice    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX health_by_severity ON health (run_id, severity DESC, step, id);

-- TensorBoard event files imported into a run (schema 8): how far each
-- was read, so that importing again reads only what was added since and
-- never stores an event twice (a board following a live TensorFlow run
-- converts only its new records). file: the event file's name
-- (TensorFlow's and PyTorch's hold a timestamp, host and pid, so a name
-- is one file's wherever the directory moves); bytes_read: the byte after
-- the last complete record imported; tail: that record's last four bytes
-- (its masked CRC) as an unsigned integer, which must still be there for
-- the file to count as the same one. A row is written in a transaction
-- that stores the values it covers, so an import killed midway reads on
-- from what it stored (at most the one record whose values were being
-- written when the batch closed is read again).
CREATE TABLE imported_files (
    run_id     INTEGER NOT NULL REFERENCES runs(id),
    file       TEXT NOT NULL,
    bytes_read INTEGER NOT NULL,
    tail       INTEGER NOT NULL,
    wall_time  REAL NOT NULL,
    PRIMARY KEY (run_id, file)
) WITHOUT ROWID;

PRAGMA application_id = 1195528024;  -- 0x47424F58, 'GBOX'
PRAGMA user_version = 8;
