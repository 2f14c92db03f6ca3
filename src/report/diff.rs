//! `--format diff`: the rendered diff as one plain unified patch, a file
//! per resource (`a/<app>/<group>_<kind>_<namespace>_<name>.yaml`), for
//! `git apply --stat`, `delta`, `diffstat` and other tools.

use super::Report;

/// Writes the patch; nothing when the run computed no rendered diff or
/// the change renders the same.
///
/// The text is exact but for one sequence: `##[`, which a CI runner reads
/// as a command anywhere in a log line, is written `#\u{23}[`.
///
pub(crate) fn emit(r: &Report, out: &mut Vec<u8>) {
    let Some(diff) = &r.diff else {
        return;
    };
    // What the patch cannot show, first, as lines a patch reader skips
    // (text before the first `---` header): partial apps and apps not
    // diffed, each on one `#` line.
    for app in diff.apps.iter().filter(|a| !a.partial.is_empty()) {
        comment(
            &format!(
                "{}: partial: {} not rendered",
                app.app,
                app.partial.join(", ")
            ),
            out,
        );
    }
    for n in &diff.not_diffed {
        comment(&format!("{}: not diffed: {}", n.app, n.why), out);
    }
    for app in &diff.apps {
        for res in &app.resources {
            if res.unified.is_empty() {
                // A deleted app's body hidden (`hideDeleted`): the file is
                // still named, as `git diff` names a binary file.
                out.extend_from_slice(
                    format!(
                        "Deleted {} (body hidden)\n",
                        crate::rendered_diff::resource_path(&app.app, &res.id)
                    )
                    .as_bytes(),
                );
                continue;
            }
            if res.unified.contains("##[") {
                out.extend_from_slice(res.unified.replace("##[", "#\\u{23}[").as_bytes());
            } else {
                out.extend_from_slice(res.unified.as_bytes());
            }
        }
    }
}

/// One `# ` line of text a patch reader skips, on one line and printable.
fn comment(text: &str, out: &mut Vec<u8>) {
    let line = format!("# {}\n", super::printable(text, false));
    out.extend_from_slice(line.replace("##[", "#\\u{23}[").as_bytes());
}
