//! The CPU feature set copapy_load checks against: the build target's by default, and
//! what the firmware sets. Its own test binary: the setting is process-wide.

mod common;

use common::{load_into, program, Region};
use copapy_firmware::{
    copapy_cpu_features, copapy_set_cpu_features, CopapyProgram, RUNNER_FEATURES,
};
use copapy_program::Features;

const FEATURES: i32 = -6;

fn load(features_needed: u32) -> i32 {
    let mut prog = program();
    prog.features = features_needed;
    let file = prog.encode();
    let region = Region::new();
    // SAFETY: zero is valid for every field of the struct.
    let mut p: CopapyProgram = unsafe { core::mem::zeroed() };
    load_into(&file, &region, &mut p)
}

#[test]
fn programs_are_checked_against_the_features_the_firmware_sets() {
    assert_eq!(copapy_cpu_features(), RUNNER_FEATURES);
    assert_eq!(RUNNER_FEATURES, Features::host().0);
    if cfg!(target_arch = "x86_64") {
        assert_eq!(
            load(Features::SSE2.0),
            0,
            "the build target's features by default"
        );
    }
    assert_eq!(
        copapy_set_cpu_features(0),
        RUNNER_FEATURES,
        "returns the previous set"
    );
    assert_eq!(
        load(Features::SSE2.0),
        FEATURES,
        "refused once the firmware says it lacks SSE2"
    );
    assert_eq!(load(0), 0, "a program needing nothing still loads");
    copapy_set_cpu_features(Features::SSE2.0 | Features::NEON.0);
    assert_eq!(load(Features::NEON.0), 0, "accepted once set");
    assert_eq!(load(Features::RV_F.0), FEATURES);
    assert_eq!(
        copapy_set_cpu_features(RUNNER_FEATURES),
        Features::SSE2.0 | Features::NEON.0
    );
}
