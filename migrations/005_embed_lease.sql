-- Who is embedding what right now, so that several pix processes on one database (two
-- `pix index`, several MCP servers refreshing before a query) never run the model twice on
-- one input: each claims a block of inputs here in a short transaction, embeds it, and deletes
-- its rows in the transaction that writes the vectors. Inputs held by another live process are
-- left to it; a process that still has work left once everything is taken waits for the
-- others to finish.
--
-- A lease ends when its owner commits the vectors, when expires_at passes (the owner renews
-- it at every commit, so only a stopped or killed process lets it run out), or at once when
-- the owner is a process of this host that no longer exists. So a killed indexer blocks
-- nobody: the next one takes its work over.
--
--   SELECT host, pid, count(*), datetime(max(expires_at), 'unixepoch') FROM embed_lease
--   GROUP BY host, pid;
CREATE TABLE embed_lease (
    -- chunk.embed_key: one distinct model input (identical chunks share it and its run)
    embed_key  INTEGER PRIMARY KEY,
    -- the owner: a process (pid on host) and when its embedding run started (unix seconds),
    -- which tells two runs of one long-lived process apart
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    started_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
