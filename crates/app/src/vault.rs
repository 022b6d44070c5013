//! Optional passphrase protection of the API key, for shared computers: the key is encrypted with
//! AES-GCM (256-bit) under a key derived from the passphrase with PBKDF2-SHA-256, all by the
//! browser's WebCrypto. Only the sealed form is stored; the passphrase never is, and the open key
//! lives in memory for the page's lifetime only.
//!
//! Sealing uses 600,000 PBKDF2 iterations, a fresh 16-byte salt and a 12-byte IV; the stored
//! form is `{iterations, salt, iv, ciphertext}` (the ciphertext ends with AES-GCM's tag). A wrong
//! passphrase or a damaged record fails to open with a message, never a panic.

use js_sys::{Array, Object, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AesDerivedKeyParams, AesGcmParams, CryptoKey, Pbkdf2Params, SubtleCrypto};

/// OWASP's 2023 figure for PBKDF2-HMAC-SHA-256; about half a second in a browser.
const ITERATIONS: u32 = 600_000;

/// An encrypted API key as stored in IndexedDB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SealedKey {
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub iv: Vec<u8>,
    /// AES-GCM output: the encrypted key followed by its 16-byte tag.
    pub ciphertext: Vec<u8>,
}

/// Why a key could not be sealed or opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VaultError {
    /// The passphrase does not open this key (AES-GCM's tag did not match).
    WrongPassphrase,
    /// The stored record is not one this version wrote.
    Damaged,
    /// WebCrypto is missing (pages served over plain http other than localhost) or failed.
    Unavailable(String),
}

impl std::fmt::Display for VaultError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VaultError::WrongPassphrase => f.write_str("That passphrase does not unlock the key."),
            VaultError::Damaged => {
                f.write_str("The saved key is damaged; remove it and paste the key again.")
            }
            VaultError::Unavailable(why) => write!(
                f,
                "This browser cannot encrypt here ({why}); it needs the page over https or localhost."
            ),
        }
    }
}

fn unavailable(error: JsValue) -> VaultError {
    let name = js_sys::Reflect::get(&error, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_else(|| "WebCrypto error".into());
    VaultError::Unavailable(name)
}

fn subtle() -> Result<(web_sys::Crypto, SubtleCrypto), VaultError> {
    let crypto = leptos::prelude::window()
        .crypto()
        .map_err(|_| VaultError::Unavailable("no window.crypto".into()))?;
    let subtle = crypto.subtle();
    if subtle.is_undefined() {
        return Err(VaultError::Unavailable("no crypto.subtle".into()));
    }
    Ok((crypto, subtle))
}

fn random(crypto: &web_sys::Crypto, len: usize) -> Result<Vec<u8>, VaultError> {
    let mut bytes = vec![0u8; len];
    crypto
        .get_random_values_with_u8_array(&mut bytes)
        .map_err(unavailable)?;
    Ok(bytes)
}

async fn resolve(promise: Result<js_sys::Promise, JsValue>) -> Result<JsValue, JsValue> {
    JsFuture::from(promise?).await
}

async fn derive(
    subtle: &SubtleCrypto,
    passphrase: &str,
    salt: &[u8],
    iterations: u32,
) -> Result<CryptoKey, VaultError> {
    let raw = Uint8Array::from(passphrase.as_bytes());
    let pbkdf2: Object = Object::new();
    js_sys::Reflect::set(&pbkdf2, &"name".into(), &"PBKDF2".into()).map_err(unavailable)?;
    let base: CryptoKey = resolve(subtle.import_key_with_object(
        "raw",
        &raw,
        &pbkdf2,
        false,
        &Array::of1(&"deriveKey".into()),
    ))
    .await
    .map_err(unavailable)?
    .unchecked_into();
    let params = Pbkdf2Params::new(
        "PBKDF2",
        &"SHA-256".into(),
        iterations,
        &Uint8Array::from(salt),
    );
    let usages = Array::of2(&"encrypt".into(), &"decrypt".into());
    let key = resolve(subtle.derive_key_with_object_and_object(
        &params,
        &base,
        &AesDerivedKeyParams::new("AES-GCM", 256),
        false,
        &usages,
    ))
    .await
    .map_err(unavailable)?;
    Ok(key.unchecked_into())
}

/// Encrypts `api_key` under `passphrase`, with a fresh salt and IV.
pub async fn seal(api_key: &str, passphrase: &str) -> Result<SealedKey, VaultError> {
    let (crypto, subtle) = subtle()?;
    let salt = random(&crypto, 16)?;
    let iv = random(&crypto, 12)?;
    let key = derive(&subtle, passphrase, &salt, ITERATIONS).await?;
    let sealed = resolve(subtle.encrypt_with_object_and_u8_array(
        &AesGcmParams::new("AES-GCM", &Uint8Array::from(iv.as_slice())),
        &key,
        api_key.as_bytes(),
    ))
    .await
    .map_err(unavailable)?;
    Ok(SealedKey {
        iterations: ITERATIONS,
        salt,
        iv,
        ciphertext: Uint8Array::new(&sealed).to_vec(),
    })
}

/// Decrypts a sealed key; a wrong passphrase (or a tampered record) is `WrongPassphrase`.
pub async fn open(sealed: &SealedKey, passphrase: &str) -> Result<String, VaultError> {
    let sane = (100_000..=10_000_000).contains(&sealed.iterations)
        && sealed.salt.len() == 16
        && sealed.iv.len() == 12
        && sealed.ciphertext.len() > 16;
    if !sane {
        return Err(VaultError::Damaged);
    }
    let (_, subtle) = subtle()?;
    let key = derive(&subtle, passphrase, &sealed.salt, sealed.iterations).await?;
    let plain = resolve(subtle.decrypt_with_object_and_u8_array(
        &AesGcmParams::new("AES-GCM", &Uint8Array::from(sealed.iv.as_slice())),
        &key,
        &sealed.ciphertext,
    ))
    .await
    .map_err(|error| {
        let name = js_sys::Reflect::get(&error, &"name".into())
            .ok()
            .and_then(|n| n.as_string());
        if name.as_deref() == Some("OperationError") {
            VaultError::WrongPassphrase
        } else {
            unavailable(error)
        }
    })?;
    String::from_utf8(Uint8Array::new(&plain).to_vec()).map_err(|_| VaultError::WrongPassphrase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    const KEY: &str = "sk-test-0123456789abcdef";

    #[wasm_bindgen_test]
    async fn a_sealed_key_opens_with_its_passphrase_only() {
        let sealed = seal(KEY, "correct horse").await.unwrap();
        assert_eq!(sealed.iterations, ITERATIONS);
        assert_eq!(
            sealed.ciphertext.len(),
            KEY.len() + 16,
            "ciphertext + GCM tag"
        );
        let stored = serde_json::to_string(&sealed).unwrap();
        assert!(!stored.contains(KEY) && !stored.contains("0123456789"));
        assert_eq!(open(&sealed, "correct horse").await.unwrap(), KEY);
        assert_eq!(
            open(&sealed, "wrong horse").await,
            Err(VaultError::WrongPassphrase)
        );
    }

    #[wasm_bindgen_test]
    async fn each_seal_uses_a_fresh_salt_and_iv_and_tampering_is_caught() {
        let a = seal(KEY, "pw").await.unwrap();
        let b = seal(KEY, "pw").await.unwrap();
        assert_ne!(a.salt, b.salt);
        assert_ne!(a.iv, b.iv);
        assert_ne!(a.ciphertext, b.ciphertext);
        let mut tampered = a.clone();
        tampered.ciphertext[0] ^= 1;
        assert_eq!(
            open(&tampered, "pw").await,
            Err(VaultError::WrongPassphrase)
        );
        let mut absurd = a.clone();
        absurd.iterations = u32::MAX;
        assert_eq!(open(&absurd, "pw").await, Err(VaultError::Damaged));
    }
}
