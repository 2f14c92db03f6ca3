//! Which SQL statements fail or duplicate data when a script runs twice.
//! Statements are split with their line numbers, parsed with `sqlparser`
//! (PostgreSQL, then MySQL) and judged on the syntax tree; what neither
//! dialect parses is judged by a token scan.

use sqlparser::ast::{AlterTableOperation, ObjectType, Statement};
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

/// One statement that is not safe to run twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SqlProblem {
    /// 1-based line in the script where the statement starts.
    pub(crate) line: u32,
    /// The statement's first words (`CREATE TABLE orders`).
    pub(crate) statement: String,
    /// Why a second run fails or duplicates (`without IF NOT EXISTS`).
    pub(crate) why: String,
}

/// A statement and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SqlStatement {
    /// 1-based line.
    pub(crate) line: u32,
    /// The text, comments removed.
    pub(crate) text: String,
}

/// Splits SQL into statements at `;` outside quotes, dollar quotes and
/// comments. psql meta-commands (`\c db`) are dropped.
#[must_use]
pub(crate) fn split_statements(sql: &str) -> Vec<SqlStatement> {
    let b: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut line: u32 = 1;
    let mut start_line: u32 = 1;
    let mut i = 0;
    let push = |cur: &mut String, start: u32, out: &mut Vec<SqlStatement>| {
        let t = cur.trim();
        if !t.is_empty() {
            out.push(SqlStatement {
                line: start,
                text: t.to_string(),
            });
        }
        cur.clear();
    };
    while i < b.len() {
        let c = b[i];
        if cur.trim().is_empty() {
            if !c.is_whitespace() {
                start_line = line;
            }
            if c == '\\' {
                // psql meta-command: to end of line.
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
        }
        match c {
            '\n' => {
                line += 1;
                cur.push(c);
            }
            '-' if b.get(i + 1) == Some(&'-') => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '#' if cur.trim().is_empty() => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if b.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                    if b[i] == '\n' {
                        line += 1;
                        cur.push('\n');
                    }
                    i += 1;
                }
                i += 2;
                cur.push(' ');
                continue;
            }
            '\'' | '"' | '`' => {
                cur.push(c);
                i += 1;
                while i < b.len() {
                    cur.push(b[i]);
                    if b[i] == '\n' {
                        line += 1;
                    }
                    if b[i] == c {
                        if b.get(i + 1) == Some(&c) {
                            cur.push(c);
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            '$' => {
                // Dollar quote `$tag$ … $tag$`.
                let tag_end = b[i + 1..]
                    .iter()
                    .position(|c| !(c.is_alphanumeric() || *c == '_'))
                    .map(|p| i + 1 + p);
                match tag_end {
                    Some(e) if b[e] == '$' => {
                        let tag: String = b[i..=e].iter().collect();
                        cur.push_str(&tag);
                        i = e + 1;
                        let rest: String = b[i..].iter().collect();
                        let close = rest.find(&tag).unwrap_or(rest.len());
                        let body = &rest[..close];
                        line += u32::try_from(body.matches('\n').count()).unwrap_or(0);
                        cur.push_str(body);
                        cur.push_str(&tag);
                        i += body.chars().count() + tag.chars().count();
                        continue;
                    }
                    _ => cur.push(c),
                }
            }
            ';' => push(&mut cur, start_line, &mut out),
            '\\' => {
                // A psql meta-command (`\gexec`, `\g`) ends the query buffer.
                push(&mut cur, start_line, &mut out);
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            _ => cur.push(c),
        }
        i += 1;
    }
    push(&mut cur, start_line, &mut out);
    out
}

/// The statements of `sql` that fail or duplicate rows when run a second time.
#[must_use]
pub(crate) fn non_idempotent(sql: &str) -> Vec<SqlProblem> {
    let mut out = Vec::new();
    for st in split_statements(sql) {
        let words = head_words(&st.text, 4);
        if words.first().is_some_and(|w| w == "DO") {
            // A procedural block: its guards cannot be judged from outside.
            continue;
        }
        let why = match parse(&st.text) {
            Some(stmts) => stmts
                .iter()
                .find_map(judge_ast)
                .or_else(|| judge_tokens(&st.text)),
            None => judge_tokens(&st.text),
        };
        if let Some(why) = why {
            out.push(SqlProblem {
                line: st.line,
                statement: head_words(&st.text, 6).join(" "),
                why,
            });
        }
    }
    out
}

fn parse(text: &str) -> Option<Vec<Statement>> {
    Parser::parse_sql(&PostgreSqlDialect {}, text)
        .or_else(|_| Parser::parse_sql(&MySqlDialect {}, text))
        .ok()
}

const NOT_EXISTS: &str = "without IF NOT EXISTS fails when it already exists";
const NO_IF_EXISTS: &str = "without IF EXISTS fails once it is gone";

fn judge_ast(s: &Statement) -> Option<String> {
    let flag = |ok: bool, why: &str| (!ok).then(|| why.to_string());
    match s {
        Statement::CreateTable(t) => flag(t.if_not_exists || t.or_replace, NOT_EXISTS),
        Statement::CreateIndex(i) => flag(i.if_not_exists, NOT_EXISTS),
        Statement::CreateSchema { if_not_exists, .. }
        | Statement::CreateSequence { if_not_exists, .. }
        | Statement::CreateDatabase { if_not_exists, .. } => flag(*if_not_exists, NOT_EXISTS),
        Statement::CreateExtension(e) => flag(e.if_not_exists, NOT_EXISTS),
        Statement::CreateType { .. } => Some(
            "fails when the type already exists (PostgreSQL has no IF NOT EXISTS for types)".into(),
        ),
        Statement::Drop {
            if_exists,
            object_type,
            ..
        } => {
            let _: &ObjectType = object_type;
            flag(*if_exists, NO_IF_EXISTS)
        }
        Statement::AlterTable(a) => a.operations.iter().find_map(|op| match op {
            AlterTableOperation::AddColumn { if_not_exists, .. } => flag(
                *if_not_exists,
                "without IF NOT EXISTS fails when the column exists",
            ),
            AlterTableOperation::DropColumn { if_exists, .. } => flag(
                *if_exists,
                "without IF EXISTS fails once the column is gone",
            ),
            AlterTableOperation::RenameColumn { .. }
            | AlterTableOperation::RenameTable { .. }
            | AlterTableOperation::RenameConstraint { .. } => {
                Some("fails on the second run: the old name is gone".into())
            }
            AlterTableOperation::AddConstraint { .. } => {
                Some("fails when the constraint exists".into())
            }
            _ => None,
        }),
        Statement::RenameTable(_) => Some("fails on the second run: the old name is gone".into()),
        Statement::Insert(ins) => {
            let guarded = ins.on.is_some()
                || ins.ignore
                || ins.replace_into
                || ins
                    .source
                    .as_ref()
                    .is_some_and(|q| q.to_string().to_uppercase().contains("NOT EXISTS"));
            flag(
                guarded,
                "without ON CONFLICT or a NOT EXISTS guard inserts the rows again (or fails on a unique key)",
            )
        }
        _ => None,
    }
}

/// The first `n` words of a statement up to its first parenthesis, keywords upper-cased.
fn head_words(text: &str, n: usize) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "CREATE",
        "TABLE",
        "INDEX",
        "UNIQUE",
        "SCHEMA",
        "SEQUENCE",
        "TYPE",
        "EXTENSION",
        "DATABASE",
        "ROLE",
        "USER",
        "VIEW",
        "FUNCTION",
        "PROCEDURE",
        "TRIGGER",
        "DOMAIN",
        "DROP",
        "ALTER",
        "ADD",
        "COLUMN",
        "INSERT",
        "INTO",
        "RENAME",
        "TO",
        "IF",
        "NOT",
        "EXISTS",
        "OR",
        "REPLACE",
        "TEMP",
        "TEMPORARY",
        "UNLOGGED",
        "CONCURRENTLY",
        "IGNORE",
        "DO",
        "ON",
        "CONSTRAINT",
        "AS",
        "ENUM",
        "PRIMARY",
        "FOREIGN",
        "KEY",
        "CHECK",
        "LOGIN",
        "WITH",
        "VALUES",
        "SELECT",
        "ONLY",
    ];
    let before_paren = text.split('(').next().unwrap_or("");
    before_paren
        .split_whitespace()
        .take(n)
        .map(|w| {
            let up = w.to_ascii_uppercase();
            if KEYWORDS.contains(&up.as_str()) {
                up
            } else {
                w.trim_end_matches([',', ';']).to_string()
            }
        })
        .collect()
}

/// Upper-cased words outside string literals.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        if c == '\'' {
            quote = Some(c);
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            cur.push(c.to_ascii_uppercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn has_seq(t: &[String], seq: &[&str]) -> bool {
    t.windows(seq.len())
        .any(|w| w.iter().zip(seq).all(|(a, b)| a == b))
}

/// The fallback when no dialect parses the statement.
fn judge_tokens(text: &str) -> Option<String> {
    let t = tokens(text);
    let first = t.first()?.as_str();
    match first {
        "CREATE" => {
            if has_seq(&t, &["OR", "REPLACE"]) || has_seq(&t, &["IF", "NOT", "EXISTS"]) {
                return None;
            }
            let object = t.iter().skip(1).find(|w| {
                !matches!(
                    w.as_str(),
                    "UNIQUE"
                        | "TEMP"
                        | "TEMPORARY"
                        | "UNLOGGED"
                        | "CONCURRENTLY"
                        | "GLOBAL"
                        | "LOCAL"
                )
            })?;
            match object.as_str() {
                "TABLE" | "INDEX" | "SCHEMA" | "SEQUENCE" | "EXTENSION" | "DATABASE" | "ROLE"
                | "USER" | "VIEW" | "FUNCTION" | "PROCEDURE" | "TRIGGER" | "DOMAIN" => {
                    Some(NOT_EXISTS.into())
                }
                "TYPE" => Some(
                    "fails when the type already exists (PostgreSQL has no IF NOT EXISTS for types)"
                        .into(),
                ),
                _ => None,
            }
        }
        "DROP" => (!has_seq(&t, &["IF", "EXISTS"])).then(|| NO_IF_EXISTS.into()),
        "ALTER" => {
            if has_seq(&t, &["RENAME"]) {
                return Some("fails on the second run: the old name is gone".into());
            }
            let add = t.iter().position(|w| w == "ADD")?;
            let next = t.get(add + 1).map(String::as_str);
            match next {
                Some("CONSTRAINT" | "PRIMARY" | "FOREIGN" | "UNIQUE" | "CHECK") => {
                    Some("fails when the constraint exists".into())
                }
                Some("VALUE") => None,
                _ if has_seq(&t[add..], &["IF", "NOT", "EXISTS"]) => None,
                _ => Some("without IF NOT EXISTS fails when the column exists".into()),
            }
        }
        "RENAME" => Some("fails on the second run: the old name is gone".into()),
        "INSERT" => {
            let guarded = has_seq(&t, &["ON", "CONFLICT"])
                || has_seq(&t, &["ON", "DUPLICATE", "KEY"])
                || has_seq(&t, &["NOT", "EXISTS"])
                || t.get(1).is_some_and(|w| w == "IGNORE");
            (!guarded).then(|| {
                "without ON CONFLICT or a NOT EXISTS guard inserts the rows again (or fails on a unique key)".into()
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flagged(sql: &str) -> Vec<(u32, String)> {
        non_idempotent(sql)
            .into_iter()
            .map(|p| (p.line, p.statement))
            .collect()
    }

    #[test]
    fn ddl_without_guards_is_flagged_with_lines() {
        let sql = "-- schema\nCREATE TABLE users (id int primary key);\n\nCREATE TABLE IF NOT EXISTS ok (id int);\nCREATE INDEX idx_users ON users (id);\nCREATE EXTENSION pgcrypto;\nCREATE EXTENSION IF NOT EXISTS citext;\nCREATE SCHEMA app;\nCREATE SEQUENCE s;\n";
        assert_eq!(
            flagged(sql),
            vec![
                (2, "CREATE TABLE users".to_string()),
                (5, "CREATE INDEX idx_users ON users".to_string()),
                (6, "CREATE EXTENSION pgcrypto".to_string()),
                (8, "CREATE SCHEMA app".to_string()),
                (9, "CREATE SEQUENCE s".to_string()),
            ]
        );
    }

    #[test]
    fn alter_drop_rename_insert() {
        let sql = "ALTER TABLE users ADD COLUMN email text;\nALTER TABLE users ADD COLUMN IF NOT EXISTS name text;\nDROP TABLE old;\nDROP TABLE IF EXISTS older;\nALTER TABLE a RENAME TO b;\nINSERT INTO roles (name) VALUES ('admin');\nINSERT INTO roles (name) VALUES ('x') ON CONFLICT DO NOTHING;\nINSERT INTO roles (name) SELECT 'y' WHERE NOT EXISTS (SELECT 1 FROM roles WHERE name = 'y');\n";
        let lines: Vec<u32> = flagged(sql).into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, vec![1, 3, 5, 6]);
    }

    #[test]
    fn mysql_forms_and_fallback() {
        let sql = "INSERT IGNORE INTO t VALUES (1);\nINSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1;\nCREATE TABLE t2 (id INT) ENGINE=InnoDB;\nCREATE TYPE mood AS ENUM ('sad', 'ok');\nCREATE ROLE app LOGIN;\n";
        let lines: Vec<u32> = flagged(sql).into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, vec![3, 4, 5]);
    }

    #[test]
    fn arbitrary_text_never_panics() {
        // A small deterministic generator over the characters the splitters treat specially.
        let alphabet: Vec<char> = "$;'\"`-/*\\\n ab(CREATE TABLE IF NOT EXISTS INSERT é"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            let mut text = String::new();
            for _ in 0..(state % 40) {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let i = usize::try_from(state >> 33).unwrap_or(0) % alphabet.len();
                text.push(alphabet[i]);
            }
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let _ = non_idempotent(&text);
            let _ = crate::rules::analysis::shell::parse_script(&text);
        }
    }

    #[test]
    fn do_blocks_dollar_quotes_and_meta_commands_are_skipped() {
        let sql = "\\set ON_ERROR_STOP on\nDO $$\nBEGIN\n  IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'mood') THEN\n    CREATE TYPE mood AS ENUM ('a');\n  END IF;\nEND\n$$;\nCREATE OR REPLACE FUNCTION f() RETURNS int AS $f$ SELECT 1; $f$ LANGUAGE sql;\nSELECT 'CREATE DATABASE app' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'app')\\gexec\nCREATE TABLE late (id int);\n";
        assert_eq!(flagged(sql), vec![(11, "CREATE TABLE late".to_string())]);
    }
}
