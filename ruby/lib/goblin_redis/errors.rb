# frozen_string_literal: true

require "redis"

module GoblinRedis
  # The server has no Goblin module, or one older than this gem needs: what every entry point
  # raises, before any Goblin command is sent, instead of the server's bare `unknown command`.
  # A Redis::BaseError, so that an application's `rescue Redis::BaseError` sees it as the
  # server's.
  class ModuleError < Redis::BaseError; end

  # A Lock#lock that was not granted within its timeout.
  class LockTimeoutError < StandardError; end

  # A Lock#unlock or Lock#renew by a holder whose lease ran out, or whose lock another holds now.
  class LockLostError < StandardError; end
end
