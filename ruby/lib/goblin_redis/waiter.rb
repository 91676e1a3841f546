# frozen_string_literal: true

module GoblinRedis
  # A lock's wait in line (GOBLIN.BLOCK), on a connection of its own: a blocking command holds the
  # connection it is sent on until the server answers, so sent on the application's client it
  # would stall every thread's commands behind it. The connection is the lock's `wait_on`, or a
  # `dup` of the application's client (the same options), opened for the wait and closed after.
  #
  # The wait is sent in slices a second shorter than that connection's read timeout (a quarter
  # shorter under 4 s), so that the server's nil at a slice's end comes back before the client
  # would give up. Each slice is the same command with the same token, which a holder's own
  # renewal lets through: a grant whose reply was lost is granted again. A wait that fails (the
  # connection lost, a read timed out) may have been granted in the reply it did not read: the
  # lock gives that back.
  class Waiter
    # The longest slice when the connection has no read timeout.
    LONGEST_SLICE = 60.0

    def initialize(redis, wait_on)
      @redis = redis
      @wait_on = wait_on
    end

    # Sends the command that `block_for.call(slice)` builds until its reply is no nil or `deadline`
    # (a monotonic time, nil: none) has passed; that reply, or nil.
    def wait(deadline, &block_for)
      connection do |waiter|
        loop do
          left = deadline && (deadline - Waiter.now)
          return nil if left && left <= 0

          # At least a millisecond: a timeout of 0 would wait for ever.
          slice = [[slice_for(waiter), left].compact.min.round(3), 0.001].max
          reply = Connection.send_checked(waiter, block_for.call(slice))
          return reply unless reply.nil?
        end
      end
    end

    def self.now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    private

    def connection
      waiter = @wait_on || @redis.with(&:dup)
      Connection.check(waiter)
      yield waiter
    ensure
      waiter.close if waiter && !@wait_on
    end

    def slice_for(waiter)
      timeout = waiter._client.read_timeout if waiter.respond_to?(:_client)
      return LONGEST_SLICE if timeout.nil? || timeout.zero?

      timeout >= 4 ? timeout - 1 : timeout * 0.75
    end
  end
  private_constant :Waiter
end
