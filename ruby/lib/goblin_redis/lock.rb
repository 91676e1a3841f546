# frozen_string_literal: true

require "securerandom"

module GoblinRedis
  # A lease lock on GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.EXTEND and GOBLIN.CAD, shaped as Ruby's own
  # Thread::Mutex (lock, try_lock, unlock, synchronize, owned?, locked?):
  #
  #   lock = GoblinRedis::Lock.new(redis, "report:7", ttl: 30)
  #   lock.synchronize(timeout: 5) do
  #     db.update(report, fence: lock.fencing_token)
  #   end
  #
  # A waiter waits in line inside the server, first come, first served, and is granted the lock
  # the moment it is released or its lease ends: it sends nothing while it waits. Each grant has
  # a fencing token, larger than every earlier grant's of the key, for the resource the lock
  # guards to refuse a holder whose lease ran out.
  #
  # One Lock is one holder (its token): give each thread or job a Lock of its own.
  class Lock
    attr_reader :key, :token, :ttl, :fencing_token

    # `redis`: the application's Redis (or a ConnectionPool of them). `ttl`: the lease in seconds
    # (to the millisecond). `fencing: false` sends no FENCE (no token is kept; a grant costs less).
    # `wait_on`: a Redis to wait on, instead of a connection opened for each wait (see #lock).
    def initialize(redis, key, ttl: 30, token: nil, fencing: true, wait_on: nil)
      @redis = Arguments.client!(redis)
      @key = key
      @ttl = Arguments.seconds!(:ttl, ttl)
      @token = token || SecureRandom.uuid
      @fencing = fencing
      @waiter = Waiter.new(@redis, wait_on)
      forget
    end

    # Takes the lock if it is free and nobody waits for it (or renews it, for its holder); true
    # if held.
    def try_lock
      started = Waiter.now
      granted(GoblinRedis.call(@redis, Commands.lock(@key, @token, lease_ms, fence: @fencing)), started)
    end

    # Takes the lock, waiting in line up to `timeout` seconds (nil: for ever); self, or a
    # LockTimeoutError. It first tries on the application's client, without waiting; only a lock
    # that must wait opens a connection, for the wait alone (GoblinRedis::Waiter).
    def lock(timeout: nil)
      return self if try_lock
      raise LockTimeoutError, "lock #{@key} not granted within #{timeout} s" unless wait_in_line(timeout)

      self
    end

    # Gives the lock back (GOBLIN.CAD: only if this holder holds it); self, or a LockLostError if
    # it did not hold it any more (its lease ran out, or another holds it now).
    def unlock
      released = GoblinRedis.call(@redis, Commands.cad(@key, @token))
      forget
      raise LockLostError, "lock #{@key} was not held by #{@token} any more" unless released == 1

      self
    end

    # The block under the lock (given the lock), released after, whatever the block does; the
    # block's value.
    def synchronize(timeout: nil)
      lock(timeout:)
      begin
        yield self
      ensure
        unlock
      end
    end

    # The lease set to `ttl` seconds from now (GOBLIN.EXTEND ... REPLACE); the holder keeps its
    # fencing token. Self, or a LockLostError if it was not held any more.
    def renew(ttl: @ttl)
      started = Waiter.now
      milliseconds = (Arguments.seconds!(:ttl, ttl) * 1000).ceil
      reply = GoblinRedis.call(@redis, Commands.extend_lease(@key, @token, milliseconds, fence: @fencing))
      if reply.zero?
        forget
        raise LockLostError, "lock #{@key} was not held by #{@token} any more"
      end
      @fencing_token = reply if @fencing
      @held_until = started + ttl
      self
    end

    # Whether this holder holds it, as far as it knows: granted, and the lease not over by this
    # process's clock (counted from before the grant was asked, so never later than the server's).
    def owned?
      !@held_until.nil? && Waiter.now < @held_until
    end

    # Whether anyone holds it now (asks the server).
    def locked?
      @redis.with do |redis|
        Connection.check(redis)
        redis.exists?(@key)
      end
    end

    private

    def lease_ms
      (@ttl * 1000).ceil
    end

    # GOBLIN.BLOCK until granted (true) or `timeout` seconds have passed (false).
    def wait_in_line(timeout)
      started = Waiter.now
      reply = @waiter.wait(timeout && (started + timeout)) do |slice|
        started = Waiter.now
        Commands.block(@key, @token, lease_ms, slice, fence: @fencing)
      end
      granted(reply, started)
    rescue Redis::BaseConnectionError
      give_back
      raise
    end

    # Records a reply of LOCK or BLOCK: nil (not granted), OK, or the fencing token.
    def granted(reply, started)
      return false if reply.nil?

      @fencing_token = reply if @fencing
      @held_until = started + @ttl
      true
    end

    def forget
      @fencing_token = nil
      @held_until = nil
    end

    # What a wait that failed may have been granted, given back on the application's client.
    def give_back
      GoblinRedis.call(@redis, Commands.cad(@key, @token))
      forget
    rescue Redis::BaseError
      nil
    end
  end
end
