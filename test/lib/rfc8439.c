/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The RFC 8439 ChaCha20 vectors, in one place for every test that checks a
 * ChaCha20 against them (the kernels, and t_kat's model).
 */
#include "rfc8439.h"

/* RFC 8439 keystream vectors: key, nonce, counter, expected keystream. */
const struct rfc8439_block rfc8439_blocks[] = {
    { "2.3.2 block function",
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
      "000000090000004a00000000", 1,
      "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
      "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e" },
    { "A.1 test vector #1",
      "0000000000000000000000000000000000000000000000000000000000000000",
      "000000000000000000000000", 0,
      "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
      "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586" },
    { "A.1 test vector #2",
      "0000000000000000000000000000000000000000000000000000000000000000",
      "000000000000000000000000", 1,
      "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
      "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f" },
};
const size_t rfc8439_nblocks =
    sizeof(rfc8439_blocks) / sizeof(rfc8439_blocks[0]);

/* RFC 8439 section 2.4.2: the sunscreen plaintext and its ciphertext. */
const char rfc8439_sunscreen[] =
    "Ladies and Gentlemen of the class of '99: If I could offer you only one "
    "tip for the future, sunscreen would be it.";
const char rfc8439_sunscreen_ct[] =
    "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
    "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
    "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
    "5af90bbf74a35be6b40b8eedf2785e42874d";
