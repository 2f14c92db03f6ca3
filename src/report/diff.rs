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
