# frozen_string_literal: true

module GoblinRedis
  # The gem's version is the module's (Cargo.toml's).
  VERSION = "0.4.0"
  # The oldest Goblin the gem works with, as MODULE LIST's `ver` gives it (major * 10000 + minor *
  # 100 + patch).
  MODULE_VERSION = 400
end
