-- Saved queries ("aliases"). They live in the database, so they travel with it.
-- spec is a JSON query request with an explicit mode (schema/alias.v1.json). pix validates it
-- when it writes a row and again whenever it reads one: a row edited by hand that no longer
-- fits the schema is refused with the alias's name, never repaired silently.
CREATE TABLE alias (
    name       TEXT PRIMARY KEY,
    spec       TEXT NOT NULL CHECK (json_valid(spec)),
    created_at TEXT NOT NULL
);
